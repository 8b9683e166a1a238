// The cheapest proxy hop Node can make on this machine, for bench:proxy to measure beside Baton's:
// a bare http server that forwards each request to the engine over one keep-alive socket, with
// the engine's token, and pipes the answer back. No auth, no parsing, no routing: what remains of
// "through ÷ direct" with it is the cost of a second process and a second loopback round trip,
// which no proxy on this machine can avoid. Run as its own process (as the console is):
//   node scripts/bench/floor-proxy.mjs <port> <engine origin> <engine token>
import http from "node:http";

const [port, upstream, token] = process.argv.slice(2);
const target = new URL(upstream);
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

http
  .createServer((req, res) => {
    const headers = { ...req.headers, host: target.host, authorization: `Bearer ${token}` };
    delete headers.connection;
    const up = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url.replace(/^\/api/, ""),
        headers,
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.on("error", () => res.writeHead(502).end());
    req.pipe(up);
  })
  .listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\n"));
