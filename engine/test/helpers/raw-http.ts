import net from "node:net";

/**
 * HTTP/1.1 as raw bytes over a TCP socket. fetch (and node:http) normalise the request target and
 * pick the Host header themselves; these tests need to send exactly what an attacker would:
 * absolute-form targets, "..", percent-encoded letters, a foreign Host.
 */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read loosely typed JSON
  json: any;
}

/** Joins a chunked body, or null while its last chunk has not arrived. */
function unchunk(body: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const nl = body.indexOf("\r\n", at);
    if (nl < 0) return null;
    const size = parseInt(body.subarray(at, nl).toString("latin1"), 16);
    if (Number.isNaN(size)) return Buffer.concat(parts);
    if (size === 0) return Buffer.concat(parts);
    if (body.length < nl + 2 + size + 2) return null;
    parts.push(body.subarray(nl + 2, nl + 2 + size));
    at = nl + 2 + size + 2;
  }
}

/** The response, or null while it is incomplete (by Content-Length, chunked framing, or close). */
function parseResponse(bytes: Buffer, closed: boolean): RawResponse | null {
  const split = bytes.indexOf("\r\n\r\n");
  if (split < 0) return null;
  const [statusLine, ...lines] = bytes.subarray(0, split).toString("latin1").split("\r\n");
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(":");
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const status = Number(statusLine!.split(" ")[1]);
  let body: Buffer | null = bytes.subarray(split + 4);
  // 1xx, 204 and 304 have no body; everything else here says how long its body is, or closes.
  const bodiless = status < 200 || status === 204 || status === 304;
  if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
    body = unchunk(body);
    if (!body) {
      if (!closed) return null;
      body = Buffer.alloc(0);
    }
  } else if (
    !closed &&
    !bodiless &&
    (headers["content-length"] === undefined || body.length < Number(headers["content-length"]))
  ) {
    return null;
  }
  const text = body.toString("utf8");
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status, headers, text, json };
}

/**
 * Sends `head` (request line and headers, without the blank line) plus `body`, and reads one
 * response: until its body is complete (Content-Length or chunked framing) or the server closes.
 */
export function rawRequest(
  port: number,
  head: string,
  body: string | Buffer = "",
  timeoutMs = 5000,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `no complete answer within ${timeoutMs} ms to:\n${head}\n(got: ${Buffer.concat(chunks).toString("latin1").slice(0, 300)})`,
        ),
      );
    }, timeoutMs);
    const done = (closed: boolean) => {
      const r = parseResponse(Buffer.concat(chunks), closed);
      if (!r && !closed) return;
      clearTimeout(timer);
      socket.destroy();
      if (r) resolve(r);
      else
        reject(
          new Error(
            `no HTTP answer to:\n${head}\n(got: ${JSON.stringify(Buffer.concat(chunks).toString("latin1").slice(0, 300))})`,
          ),
        );
    };
    socket.on("data", (c: Buffer) => {
      chunks.push(c);
      done(false);
    });
    socket.on("error", () => undefined);
    socket.on("close", () => done(true));
    socket.write(`${head}\r\n\r\n`);
    socket.write(body);
  });
}

/** One request with `Connection: close`: `target` is sent as is, `headers` are added after Host. */
export function raw(
  port: number,
  method: string,
  target: string,
  opts: { host?: string | null; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  const lines = [`${method} ${target} HTTP/1.1`];
  const host = opts.host === undefined ? `127.0.0.1:${port}` : opts.host;
  if (host !== null) lines.push(`Host: ${host}`);
  for (const [k, v] of Object.entries(opts.headers ?? {})) lines.push(`${k}: ${v}`);
  if (opts.body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(opts.body)}`);
  lines.push("Connection: close");
  return rawRequest(port, lines.join("\r\n"), opts.body ?? "");
}
