import http from "node:http";
import { pct, sleep, type Bench, type Row } from "./lib.js";

/**
 * 6. Preview proxy overhead: GET / of a tiny HTTP/1.1 server inside a restricted sandbox, through
 * the preview host (client → engine proxy → socat relay in the sandbox's netns → server) versus the
 * same GET made inside the sandbox to 127.0.0.1:8000 (the server's own latency). Both sides use
 * one keep-alive connection and time each request alone; the rounds alternate so that noise from
 * anything else on the machine falls on both.
 */

const ROUNDS = 3;
const PER_ROUND = 100;
const WARMUP = 30;
const PORT = 8000;
const BODY = "hello from the sandbox\n";

/** The server: HTTP/1.1 keep-alive, fixed body, Nagle off (headers and body are two writes), no request log. */
const SERVER = `
import http.server
BODY = ${JSON.stringify(BODY)}.encode()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_GET(self):
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", ${PORT}), H).serve_forever()
`;

/** The direct client, run inside the sandbox: argv = warm-up count, timed count; prints the timed latencies (ns) as JSON. */
const CLIENT = `
import http.client, json, sys, time
warmup, n = int(sys.argv[1]), int(sys.argv[2])
conn = http.client.HTTPConnection("127.0.0.1", ${PORT})
out = []
for i in range(warmup + n):
    t0 = time.perf_counter_ns()
    conn.request("GET", "/")
    r = conn.getresponse()
    body = r.read()
    t = time.perf_counter_ns() - t0
    if r.status != 200 or body != ${JSON.stringify(BODY)}.encode():
        sys.exit("bad answer %d %r" % (r.status, body))
    if i >= warmup:
        out.append(t)
print(json.dumps(out))
`;

const b64 = (s: string) => Buffer.from(s).toString("base64");

/** One GET through the preview host on the agent's keep-alive connection; resolves with the elapsed ms. */
function timedGet(port: number, host: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request({ host: "127.0.0.1", port, path: "/", headers: { host }, agent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => {
        const t = performance.now() - t0;
        if (res.statusCode !== 200 || body !== BODY)
          reject(new Error(`preview GET: ${res.statusCode} ${body.slice(0, 200)}`));
        else resolve(t);
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

export async function previewOverhead(b: Bench): Promise<Row[]> {
  const id = await b.create({ network: "restricted" });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let rows: Row[];
  try {
    await b.exec(
      id,
      `echo ${b64(SERVER)} | base64 -d > /tmp/srv.py && echo ${b64(CLIENT)} | base64 -d > /tmp/get.py && (nohup python3 /tmp/srv.py >/tmp/srv.log 2>&1 &)`,
    );
    const info = await waitListening(b, id);
    const port = Number(new URL(b.e.origin).port);
    const host: string = info.host;
    if (host !== `${PORT}-${id.toLowerCase()}.sbx.localhost:${port}`)
      throw new Error(`unexpected preview host ${host}`);

    const preview: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < WARMUP; i++) await timedGet(port, host, agent);
    for (let round = 0; round < ROUNDS; round++) {
      const out = await b.exec(id, `python3 /tmp/get.py ${round === 0 ? WARMUP : 5} ${PER_ROUND}`);
      direct.push(...(JSON.parse(out) as number[]).map((ns) => ns / 1e6));
      for (let i = 0; i < PER_ROUND; i++) preview.push(await timedGet(port, host, agent));
    }
    const sockets = Object.values(agent.sockets).flat().length + Object.values(agent.freeSockets).flat().length;
    b.note(
      `Preview proxy: \`GET http://${PORT}-<id>.sbx.localhost:${port}/\` (${Buffer.byteLength(BODY)}-byte body) sent to 127.0.0.1:${port} with that Host header from the bench (Node http, one keep-alive connection, ${sockets} socket open at the end), ` +
        `against \`GET http://127.0.0.1:${PORT}/\` from inside the sandbox (python3 http.client, one keep-alive connection, time.perf_counter_ns per request). ` +
        `Server: python3 http.server ThreadingHTTPServer, HTTP/1.1, TCP_NODELAY. ${ROUNDS} alternating rounds of ${PER_ROUND} per side after ${WARMUP} warm-ups; sandbox network "restricted". ` +
        `The two clients differ (Node outside, Python inside), so the ratio includes the client's own cost on each side. ` +
        `Preview p90 ${pct(preview, 90).toFixed(2)} ms, max ${Math.max(...preview).toFixed(2)} ms; direct p90 ${pct(direct, 90).toFixed(2)} ms, max ${Math.max(...direct).toFixed(2)} ms.`,
    );
    const src = "same GET inside the sandbox to 127.0.0.1:8000, keep-alive";
    const n = preview.length;
    rows = [
      {
        metric: `preview GET through the proxy, p50 (N=${n}, keep-alive)`,
        ours: pct(preview, 50),
        unit: "ms",
        ref: pct(direct, 50),
        source: `${src}, p50`,
      },
      {
        metric: "preview GET through the proxy, p99",
        ours: pct(preview, 99),
        unit: "ms",
        ref: pct(direct, 99),
        source: `${src}, p99`,
      },
      {
        metric: "preview GET through the proxy, p50",
        ours: pct(preview, 50),
        unit: "ms",
        ref: 4.43,
        source: "engine-notes §4 b: curl through a socat relay, new connection per GET, median",
      },
      {
        metric: "preview proxy: added latency at p50 (preview − direct)",
        ours: pct(preview, 50) - pct(direct, 50),
        unit: "ms",
        ref: null,
        source: "difference of the p50s above",
      },
    ];
  } finally {
    agent.destroy();
  }
  await b.terminate(id);
  return rows;
}

/** Polls GET /sandboxes/{id}/previews/8000 until the server inside listens; returns the preview description. */
async function waitListening(b: Bench, id: string): Promise<{ host: string; listening: boolean }> {
  for (let i = 0; i < 200; i++) {
    const r = await b.e.api("GET", `/sandboxes/${id}/previews/${PORT}`);
    if (r.status !== 200) throw new Error(`previews/${PORT}: ${r.status} ${r.text}`);
    if (r.body.listening) return r.body;
    await sleep(50);
  }
  throw new Error(`the server in ${id} did not listen on ${PORT}: ${await b.exec(id, "cat /tmp/srv.log")}`);
}
