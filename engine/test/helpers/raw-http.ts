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

/**
 * Sends `head` (request line and headers, without the blank line) plus `body`, and reads until the
 * server closes the connection (send `Connection: close`, or expect an error that closes it).
 */
export function rawRequest(port: number, head: string, body: string | Buffer = "", timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms to:\n${head}\n(got: ${Buffer.concat(chunks).toString("latin1").slice(0, 300)})`));
    }, timeoutMs);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString("utf8");
      const split = raw.indexOf("\r\n\r\n");
      if (split < 0) return reject(new Error(`no HTTP answer to:\n${head}\n(got: ${JSON.stringify(raw.slice(0, 300))})`));
      const [statusLine, ...lines] = raw.slice(0, split).split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(":");
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const text = raw.slice(split + 4);
      let json: unknown = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON */
      }
      resolve({ status: Number(statusLine!.split(" ")[1]), headers, text, json });
    });
    socket.write(`${head}\r\n\r\n`);
    socket.write(body);
  });
}

/** One request with `Connection: close`: `target` is sent as is, `headers` are added after Host. */
export function raw(port: number, method: string, target: string, opts: { host?: string | null; headers?: Record<string, string>; body?: string } = {}): Promise<RawResponse> {
  const lines = [`${method} ${target} HTTP/1.1`];
  const host = opts.host === undefined ? `127.0.0.1:${port}` : opts.host;
  if (host !== null) lines.push(`Host: ${host}`);
  for (const [k, v] of Object.entries(opts.headers ?? {})) lines.push(`${k}: ${v}`);
  if (opts.body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(opts.body)}`);
  lines.push("Connection: close");
  return rawRequest(port, lines.join("\r\n"), opts.body ?? "");
}
