import http from "node:http";
import net from "node:net";
import dns from "node:dns/promises";
import fs from "node:fs";

/**
 * The allow-listing egress proxy of one restricted sandbox. It speaks HTTP CONNECT on a unix
 * socket that only that sandbox's relay reaches, and opens a tunnel only to port 443 of a host
 * on its list (exact names, or `*.example.com` for subdomains). Plain HTTP, other ports,
 * IP literals and loopback/link-local destinations are refused.
 */
export class EgressProxy {
  private server: http.Server;
  private sockets = new Set<net.Socket>();

  constructor(
    private readonly allow: string[],
    /** Names resolved without DNS (tests point them at hosts in a namespace they made). */
    private readonly staticHosts: Map<string, string>,
  ) {
    this.server = http.createServer((req, res) => {
      res.writeHead(403, { "Content-Type": "text/plain" }).end("orkestr egress: restricted sandboxes may only use HTTPS (CONNECT) to allowed hosts\n");
    });
    this.server.on("connect", (req, client: net.Socket, head) => void this.tunnel(req, client, head));
    this.server.on("connection", (s: net.Socket) => {
      this.sockets.add(s);
      s.once("close", () => this.sockets.delete(s));
    });
  }

  allows(host: string): boolean {
    const h = host.toLowerCase().replace(/\.$/, "");
    return this.allow.some((rule) => {
      const r = rule.toLowerCase();
      return r.startsWith("*.") ? h.endsWith(r.slice(1)) && h.length > r.length - 1 : h === r;
    });
  }

  private async tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    const refuse = (status: string, why: string) => {
      client.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\norkestr egress: ${why}\n`);
    };
    client.on("error", () => undefined);
    const target = req.url ?? "";
    const m = target.match(/^([^:]+):(\d+)$/);
    if (!m) return refuse("400 Bad Request", "CONNECT target must be host:port");
    const [, host, portStr] = m as unknown as [string, string, string];
    if (Number(portStr) !== 443) return refuse("403 Forbidden", `only HTTPS (port 443) is allowed, not port ${portStr}`);
    if (net.isIP(host)) return refuse("403 Forbidden", "IP addresses are not allowed; use an allowed host name");
    if (!this.allows(host)) return refuse("403 Forbidden", `${host} is not on this sandbox's allow list`);
    let address = this.staticHosts.get(host.toLowerCase());
    if (!address) {
      try {
        address = (await dns.lookup(host)).address;
      } catch {
        return refuse("502 Bad Gateway", `cannot resolve ${host}`);
      }
    }
    if (isLocal(address)) return refuse("403 Forbidden", `${host} resolves to a local address`);
    const upstream = net.connect({ host: address, port: 443 });
    upstream.setTimeout(15_000, () => upstream.destroy());
    upstream.once("connect", () => {
      upstream.setTimeout(0);
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => refuse("502 Bad Gateway", `cannot connect to ${host}:443`));
    client.once("close", () => upstream.destroy());
  }

  listen(socketPath: string): Promise<void> {
    fs.rmSync(socketPath, { force: true });
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(socketPath, () => {
        fs.chmodSync(socketPath, 0o600);
        resolve();
      });
    });
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((r) => this.server.close(() => r()));
  }
}

function isLocal(ip: string): boolean {
  if (net.isIPv6(ip)) return ip === "::1" || ip.startsWith("fe80:") || ip.startsWith("::ffff:127.");
  const [a, b] = ip.split(".").map(Number) as [number, number];
  return a === 127 || a === 0 || (a === 169 && b === 254) || (a === 10 && b === 200);
}
