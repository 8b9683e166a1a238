import http from "node:http";
import net from "node:net";
import { Resolver } from "node:dns/promises";
import fs from "node:fs";
import os from "node:os";

/**
 * The allow-listing egress proxy of one restricted sandbox. It speaks HTTP CONNECT on a unix
 * socket that only that sandbox's relay reaches, and opens a tunnel only to port 443 of a host
 * on its list (exact names, or `*.example.com` for subdomains). Plain HTTP, other ports,
 * IP literals and names resolving to loopback, private, link-local or host addresses are refused.
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
      res
        .writeHead(403, { "Content-Type": "text/plain" })
        .end("orkestr egress: restricted sandboxes may only use HTTPS (CONNECT) to allowed hosts\n");
    });
    // The sandbox's relay already caps its connections; this bounds the engine's side regardless.
    this.server.maxConnections = 512;
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
      // A bare domain covers its subdomains (the seed's allow_domains example relies on it:
      // "pythonhosted.org" admits files.pythonhosted.org); "*.d" covers only subdomains.
      return r.startsWith("*.") ? h.endsWith(r.slice(1)) && h.length > r.length - 1 : h === r || h.endsWith(`.${r}`);
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
    const [, rawHost, portStr] = m as unknown as [string, string, string];
    // One normal form for the allow list and the static names alike ("Allowed.Test." = "allowed.test").
    const host = rawHost.toLowerCase().replace(/\.$/, "");
    if (Number(portStr) !== 443)
      return refuse("403 Forbidden", `only HTTPS (port 443) is allowed, not port ${portStr}`);
    if (net.isIP(host)) return refuse("403 Forbidden", "IP addresses are not allowed; use an allowed host name");
    if (!this.allows(host)) return refuse("403 Forbidden", `${host} is not on this sandbox's allow list`);
    let address = this.staticHosts.get(host);
    if (!address) {
      try {
        address = await resolveHost(host);
      } catch {
        return refuse("502 Bad Gateway", `cannot resolve ${host}`);
      }
    }
    if (isForbiddenAddress(address))
      return refuse("403 Forbidden", `${host} resolves to a loopback, private, link-local or host address`);
    if (client.destroyed) return;
    let established = false;
    const upstream = net.connect({ host: address, port: 443 });
    upstream.setTimeout(15_000, () => upstream.destroy(new Error("connect timeout")));
    upstream.once("connect", () => {
      established = true;
      upstream.setTimeout(0);
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => {
      // Before the tunnel exists the client gets an HTTP answer; after, the bytes are TLS: just cut it.
      if (established) client.destroy();
      else refuse("502 Bad Gateway", `cannot connect to ${host}:443`);
    });
    upstream.once("close", () => {
      if (established) client.end();
    });
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

/**
 * Destinations a sandbox must never reach through the proxy (nor, for `open`, through its NAT),
 * whatever name it allow-listed (its owner controls that name's DNS): unspecified, private
 * (RFC 1918, CGNAT, ULA), loopback, link-local (cloud metadata), IETF/multicast/reserved, NAT64.
 * The sandbox range 10.200.0.0/16 is inside 10.0.0.0/8. Besides these, every address of the
 * engine's own host is refused.
 */
export const FORBIDDEN_V4 = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.168.0.0/16",
  "224.0.0.0/4",
  "240.0.0.0/4",
];
// No ::ffff:0:0/96 here: BlockList checks IPv4 addresses against IPv6 rules through that mapping
// (so it would refuse every IPv4 address), and the IPv4 rules already cover mapped addresses.
export const FORBIDDEN_V6 = ["::/127", "64:ff9b::/96", "fc00::/7", "fe80::/10", "ff00::/8"];

const FORBIDDEN = (() => {
  const list = new net.BlockList();
  for (const [cidrs, family] of [
    [FORBIDDEN_V4, "ipv4"],
    [FORBIDDEN_V6, "ipv6"],
  ] as const) {
    for (const cidr of cidrs) {
      const [addr, prefix] = cidr.split("/") as [string, string];
      list.addSubnet(addr, Number(prefix), family);
    }
  }
  return list;
})();

/** True for addresses in the lists above and for the host's own addresses (IPv4 rules also match IPv4-mapped IPv6). */
export function isForbiddenAddress(ip: string): boolean {
  const family = net.isIPv6(ip) ? "ipv6" : net.isIPv4(ip) ? "ipv4" : null;
  if (!family) return true;
  if (FORBIDDEN.check(ip, family)) return true;
  // The host's own addresses (not only loopback): a service bound to 0.0.0.0 answers on each of them.
  const own = new net.BlockList();
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) own.addAddress(a.address.replace(/%.*$/, ""), a.family === "IPv6" ? "ipv6" : "ipv4");
  }
  return own.check(ip, family);
}

/**
 * DNS through c-ares with a short timeout, not dns.lookup: lookup runs on libuv's small thread
 * pool, where a sandbox's slow lookups would stall the engine's file I/O.
 */
const resolver = new Resolver({ timeout: 3000, tries: 1 });
async function resolveHost(host: string): Promise<string> {
  try {
    const v4 = await resolver.resolve4(host);
    if (v4[0]) return v4[0];
  } catch {
    /* try IPv6 */
  }
  const v6 = await resolver.resolve6(host);
  if (!v6[0]) throw new Error(`no address for ${host}`);
  return v6[0];
}
