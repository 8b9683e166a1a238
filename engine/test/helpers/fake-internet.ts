import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { selfSignedCert } from "./tls.js";

/**
 * A "fake internet" for network tests (engine-notes: tests only send traffic to loopback or to
 * namespaces the test made). It is one network namespace joined to the host by a veth /30:
 * host side 198.18.0.1, namespace side 198.18.0.2 (the next free /30 in 198.18.0.0/24 when that
 * one is taken by another test on the machine). Inside it a Node process serves HTTPS on :443
 * (self-signed for allowed.test and denied.test) and plain HTTP on :80.
 *
 * Everything is undone by `close()`, which is idempotent and never throws; the server process
 * also stops by itself after `maxLifetimeMs`, and namespaces a dead test process left behind are
 * removed the next time one is created.
 */

const execFileP = promisify(execFile);

export const FAKE_GREETING = "hello from the fake internet";
export const HOST_SECRET = "host-secret";

export interface FakeInternet {
  /** Name of the network namespace. */
  netns: string;
  /** Host side of the veth (the address servers in the namespace see connections from). */
  hostIp: string;
  /** Address of the servers inside the namespace. */
  ip: string;
  hostIf: string;
  /**
   * A private (RFC 1918) address the namespace also holds (10.254.<k>.2, routed over the same veth):
   * lets tests check that nothing treats "private" as reachable, without any traffic leaving the machine.
   */
  privateIp: string;
  /** PEM of the self-signed certificate (CN allowed.test, SANs allowed.test and denied.test). */
  certPem: string;
  /** Requests the servers received, as "https|http <Host header> <url> from <address>" lines. */
  requests(): Promise<string[]>;
  close(): Promise<void>;
}

const NETNS_PREFIX = "baton-fi-";

function run(cmd: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return execFileP(cmd, args, { timeout: 10_000 });
}

function which(bin: string): boolean {
  return (process.env.PATH ?? "/usr/bin:/bin")
    .split(":")
    .concat(["/usr/sbin", "/sbin"])
    .some((d) => {
      try {
        fs.accessSync(path.join(d, bin), fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes fake-internet namespaces whose creating process no longer exists (a crashed earlier run). */
async function reapStale(): Promise<void> {
  const list = (await run("ip", ["netns", "list"]).catch(() => ({ stdout: "" }))).stdout;
  for (const line of list.split("\n")) {
    const name = line.trim().split(/\s+/)[0] ?? "";
    const m = name.match(/^baton-fi-(\d+)-\d+$/);
    if (m && !alive(Number(m[1]))) await run("ip", ["netns", "del", name]).catch(() => undefined);
  }
}

/** The first /30 in 198.18.0.0/24 whose host address is not already on this machine. */
async function freeSubnet(): Promise<{ hostIp: string; ip: string; privateIp: string }> {
  const used = (await run("ip", ["-4", "-o", "addr", "show"])).stdout;
  const routes = (await run("ip", ["-4", "route", "show", "table", "all"])).stdout;
  for (let base = 0; base < 256; base += 4) {
    const net = `198.18.0.${base}/30`;
    const hostIp = `198.18.0.${base + 1}`;
    const privateIp = `10.254.${base / 4}.2`;
    if (used.includes(` ${hostIp}/`) || routes.includes(`${net} `) || routes.includes(`${privateIp} `)) continue;
    return { hostIp, ip: `198.18.0.${base + 2}`, privateIp };
  }
  throw new Error("no free /30 left in 198.18.0.0/24");
}

const SERVER_JS = `
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
const [dir, lifetime] = process.argv.slice(2);
const log = (line) => fs.appendFileSync(dir + "/requests.log", line + "\\n");
const handler = (scheme) => (req, res) => {
  log(scheme + " " + (req.headers.host ?? "-") + " " + req.url + " from " + req.socket.remoteAddress);
  res.writeHead(200, { "content-type": "text/plain" }).end(${JSON.stringify(FAKE_GREETING)} + "\\n");
};
const tls = https.createServer({ key: fs.readFileSync(dir + "/key.pem"), cert: fs.readFileSync(dir + "/cert.pem") }, handler("https"));
const plain = http.createServer(handler("http"));
let up = 0;
const ready = () => { if (++up === 2) process.stdout.write("ready\\n"); };
// 0.0.0.0 inside the namespace: both its public-looking and its private address answer.
tls.listen(443, "0.0.0.0", ready);
plain.listen(80, "0.0.0.0", ready);
// Never outlive a test run, even if the test process dies without cleaning up.
setTimeout(() => process.exit(0), Number(lifetime)).unref();
process.on("SIGTERM", () => process.exit(0));
`;

let counter = 0;

export async function startFakeInternet(opts: { maxLifetimeMs?: number } = {}): Promise<FakeInternet> {
  for (const bin of ["ip", "openssl"]) if (!which(bin)) throw new Error(`fake internet needs "${bin}" on PATH`);
  if (process.getuid?.() !== 0) throw new Error("fake internet needs root (netns and veth)");
  await reapStale();

  const n = counter++;
  const netns = `${NETNS_PREFIX}${process.pid}-${n}`;
  // Interface names are at most 15 characters.
  const tag = `${process.pid % 100000}${n}`;
  const hostIf = `bfi${tag}h`;
  const nsIf = `bfi${tag}n`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-fi-"));
  let server: ChildProcess | null = null;
  let nsCreated = false;
  let closed = false;

  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    if (server && server.exitCode === null && server.signalCode === null) {
      const s = server;
      const exited = new Promise<void>((r) => s.once("exit", () => r()));
      s.kill("SIGKILL");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    }
    // Deleting the namespace destroys the veth pair (and with it the host address and route).
    if (nsCreated) await run("ip", ["netns", "del", netns]).catch(() => undefined);
    await run("ip", ["link", "del", hostIf]).catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    const { hostIp, ip, privateIp } = await freeSubnet();
    selfSignedCert(dir, ["allowed.test", "denied.test"]);
    fs.writeFileSync(path.join(dir, "server.mjs"), SERVER_JS);

    await run("ip", ["netns", "add", netns]);
    nsCreated = true;
    await run("ip", ["link", "add", hostIf, "type", "veth", "peer", "name", nsIf, "netns", netns]);
    await run("ip", ["addr", "add", `${hostIp}/30`, "dev", hostIf]);
    await run("ip", ["link", "set", hostIf, "up"]);
    await run("ip", ["-n", netns, "addr", "add", `${ip}/30`, "dev", nsIf]);
    await run("ip", ["-n", netns, "link", "set", nsIf, "up"]);
    await run("ip", ["-n", netns, "link", "set", "lo", "up"]);
    await run("ip", ["-n", netns, "addr", "add", `${privateIp}/32`, "dev", nsIf]);
    // A host route through our veth: it vanishes with the veth when the namespace is deleted.
    await run("ip", ["route", "add", `${privateIp}/32`, "dev", hostIf]);
    // Sanity: the host must route both addresses over our veth, not anywhere else.
    for (const addr of [ip, privateIp]) {
      const via = (await run("ip", ["-4", "route", "get", addr])).stdout;
      if (!via.includes(`dev ${hostIf}`)) throw new Error(`host routes ${addr} elsewhere: ${via.trim()}`);
    }

    const srv = spawn(
      "ip",
      [
        "netns",
        "exec",
        netns,
        process.execPath,
        path.join(dir, "server.mjs"),
        dir,
        String(opts.maxLifetimeMs ?? 10 * 60_000),
      ],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    server = srv;
    let err = "";
    srv.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`fake internet server not ready in 10 s: ${err}`)), 10_000);
      let out = "";
      srv.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("ready")) {
          clearTimeout(t);
          resolve();
        }
      });
      srv.once("exit", (code) => {
        clearTimeout(t);
        reject(new Error(`fake internet server exited (${code}): ${err}`));
      });
    });
    const certPem = fs.readFileSync(path.join(dir, "cert.pem"), "utf8");
    return {
      netns,
      hostIp,
      ip,
      hostIf,
      privateIp,
      certPem,
      requests: async () => {
        try {
          return fs.readFileSync(path.join(dir, "requests.log"), "utf8").split("\n").filter(Boolean);
        } catch {
          return [];
        }
      },
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

/** What a sandbox must never see: a plain HTTP server on the host's loopback (or another host address). */
export interface HostServer {
  port: number;
  url: string;
  hits(): number;
  close(): Promise<void>;
}

export async function startHostServer(host = "127.0.0.1"): Promise<HostServer> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits++;
    res.writeHead(200, { "content-type": "text/plain" }).end(`${HOST_SECRET}\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${host}:${port}/`,
    hits: () => hits,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Names of this process's fake-internet namespaces still present (for leak checks). */
export async function leftoverNamespaces(): Promise<string[]> {
  const list = (await run("ip", ["netns", "list"]).catch(() => ({ stdout: "" }))).stdout;
  return list
    .split("\n")
    .map((l) => l.trim().split(/\s+/)[0] ?? "")
    .filter((name) => name.startsWith(`${NETNS_PREFIX}${process.pid}-`));
}
