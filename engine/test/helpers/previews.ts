import http from "node:http";
import WebSocket from "ws";
import { exec, type EngineHandle } from "./engine.js";

/**
 * Helpers for preview tests: requests to the engine on 127.0.0.1 carrying an explicit preview
 * Host header (no DNS involved), and a small server run inside a sandbox.
 */

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export function enginePort(e: EngineHandle): number {
  return Number(new URL(e.origin).port);
}

export function previewHostOf(e: EngineHandle, id: string, port: number): string {
  return `${port}-${id.toLowerCase()}.sbx.localhost:${enginePort(e)}`;
}

/** One HTTP request to the engine with the given Host; redirects are not followed. */
export function hostRequest(
  e: EngineHandle,
  host: string,
  path = "/",
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port: enginePort(e),
        method: opts.method ?? "GET",
        path,
        headers: { host, ...opts.headers },
        agent: false,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** Opens a WebSocket through the preview host; rejects with the HTTP status when it is refused. */
export function openPreviewSocket(
  e: EngineHandle,
  host: string,
  path = "/hmr",
  headers: Record<string, string> = {},
): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${enginePort(e)}${path}`, { headers: { host, ...headers } });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(ws));
    ws.once("unexpected-response", (req, res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => {
        req.destroy();
        reject(Object.assign(new Error(`refused ${res.statusCode}: ${text}`), { status: res.statusCode, body: text }));
      });
    });
    ws.once("error", reject);
  });
}

/** Sends one text message and waits for the next one. */
export function roundTrip(ws: WebSocket, text: string, ms = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no WebSocket answer to ${text} within ${ms} ms`)), ms);
    ws.once("message", (data) => {
      clearTimeout(t);
      resolve(Buffer.isBuffer(data) ? data.toString("utf8") : String(data));
    });
    ws.send(text);
  });
}

/**
 * The server run inside sandboxes: `node srv.js <port> <name> [bind]`. `/` says hello with its
 * name, `/echo` returns what it received, `/stream` sends two chunks 1.5 s apart, `/firstchunk`
 * answers as soon as the first chunk of the request body arrives, and upgrades
 * become a minimal WebSocket echo ("<name>:<message>"), written out here because the sandbox has
 * no ws package.
 */
export const SANDBOX_SERVER = String.raw`
const http = require("http");
const crypto = require("crypto");
const [port, name, bind] = [Number(process.argv[2]), process.argv[3], process.argv[4] || "127.0.0.1"];
const server = http.createServer((req, res) => {
  if (req.url.startsWith("/stream")) {
    res.writeHead(200, { "content-type": "text/plain" });
    res.write("first\n");
    setTimeout(() => res.end("second\n"), 1500);
    return;
  }
  if (req.url.startsWith("/firstchunk")) {
    req.once("data", (d) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("got " + d.length + "\n");
      let rest = 0;
      req.on("data", (more) => (rest += more.length));
      req.on("end", () => res.end("then " + rest + "\n"));
    });
    return;
  }
  if (req.url.startsWith("/echo")) {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      res.writeHead(201, "Made", { "content-type": "application/json", "set-cookie": ["a=1", "b=2"], "x-served-by": name });
      res.end(JSON.stringify({ name, method: req.method, url: req.url, headers: req.headers, body }));
    });
    return;
  }
  res.writeHead(200, { "content-type": "text/plain" });
  res.end("hello from " + name + "\n");
});
server.on("upgrade", (req, socket) => {
  const accept = crypto.createHash("sha1").update(req.headers["sec-websocket-key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
  socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + "\r\n\r\n");
  let buf = Buffer.alloc(0);
  socket.on("error", () => {});
  socket.on("data", (d) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      if (buf.length < 2) return;
      const op = buf[0] & 15;
      let len = buf[1] & 127;
      let off = 2;
      if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); off = 4; }
      const masked = (buf[1] & 128) !== 0;
      const mask = masked ? buf.subarray(off, off + 4) : null;
      if (masked) off += 4;
      if (buf.length < off + len) return;
      const payload = Buffer.from(buf.subarray(off, off + len));
      if (mask) for (let i = 0; i < len; i++) payload[i] ^= mask[i % 4];
      buf = buf.subarray(off + len);
      if (op === 8) { socket.end(Buffer.from([0x88, 0])); return; }
      if (op === 1) {
        const out = Buffer.from(name + ":" + payload.toString());
        const hdr = out.length < 126 ? Buffer.from([0x81, out.length]) : Buffer.from([0x81, 126, out.length >> 8, out.length & 255]);
        socket.write(Buffer.concat([hdr, out]));
      }
    }
  });
});
server.listen(port, bind);
`;

/** Starts SANDBOX_SERVER in the background inside a sandbox (pid in /tmp/srv-<port>.pid) and waits until the port listens. */
export async function serveInSandbox(
  e: EngineHandle,
  id: string,
  port: number,
  name: string,
  bind = "127.0.0.1",
): Promise<void> {
  const put = await exec(
    e,
    id,
    `printf '%s' "$SRV" > /workspace/srv.js && (nohup node /workspace/srv.js ${port} ${name} ${bind} >/tmp/srv-${port}.log 2>&1 & echo $! > /tmp/srv-${port}.pid)`,
    { env: { SRV: SANDBOX_SERVER } },
  );
  if (put.exit_code !== 0) throw new Error(`starting the server failed: ${put.stderr}`);
  for (let i = 0; i < 200; i++) {
    const r = await exec(
      e,
      id,
      `cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "0A" {print $2}' | grep -ci ':${port.toString(16).toUpperCase().padStart(4, "0")}$' || true`,
    );
    if (Number(r.stdout.trim()) > 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  const log = await exec(e, id, `cat /tmp/srv-${port}.log`);
  throw new Error(`the server in ${id} did not listen on ${port}: ${log.stdout}`);
}
