import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import type { EngineConfig } from "../config.js";
import { EgressProxy, FORBIDDEN_V4, FORBIDDEN_V6 } from "../services/egress-proxy.js";
import { sleep } from "../lib/time.js";
import type { Host } from "./host.js";
import type { SandboxProcess } from "./sandbox-proc.js";
import { spawnSocatInSandboxNet } from "./sandbox-socat.js";
import { holdersDir } from "./holder.js";

/** In-sandbox address of the allow-listing proxy (restricted mode). */
export const PROXY_PORT = 3128;
/** Concurrent connections one restricted sandbox may hold open through its relay. */
export const RELAY_MAX_CONNECTIONS = 256;

/**
 * The environment that points a restricted sandbox's (or template build's) HTTP clients at the
 * egress proxy relayed on PROXY_PORT inside its network namespace; loopback goes direct.
 */
export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  return {
    HTTPS_PROXY: url,
    https_proxy: url,
    HTTP_PROXY: url,
    http_proxy: url,
    NO_PROXY: "localhost,127.0.0.1,::1",
    no_proxy: "localhost,127.0.0.1,::1",
  };
}

export interface NetworkHandle {
  mode: "off" | "restricted" | "open";
  close(): Promise<void>;
}

/**
 * Gives a sandbox its network mode. Every sandbox starts with its own network namespace holding
 * only loopback (`off`). `restricted` adds a relay on the sandbox's 127.0.0.1:3128 to a per-sandbox
 * CONNECT proxy in the engine that admits only HTTPS to allow-listed hosts: the sandbox has no
 * route anywhere else. `open` adds user-mode NAT (slirp4netns) to the internet, without access to
 * the host itself (loopback or any of its addresses) or to private and link-local networks.
 */
export async function startNetwork(
  host: Host,
  proc: SandboxProcess,
  mode: "off" | "restricted" | "open",
  allow: string[],
  config: EngineConfig,
): Promise<NetworkHandle> {
  if (mode === "off") return { mode, close: async () => undefined };
  if (mode === "restricted") {
    const proxy = await listenEgress(proc, allow, config);
    try {
      const relay = await startEgressRelay(proc, proxy.sock);
      return { mode, close: async () => (await relay.close(), await proxy.close()) };
    } catch (e) {
      await proxy.close();
      throw e;
    }
  }
  if (!host.slirp4netns) throw new Error("slirp4netns is not installed");
  const filter = await installOpenFilter(proc);
  try {
    const slirp = await startSlirp(host.slirp4netns, proc);
    return { mode, close: async () => (await slirp.close(), await filter.remove()) };
  } catch (e) {
    await filter.remove();
    throw e;
  }
}

/**
 * A restarted engine takes over the network of an adopted sandbox. `restricted`: the CONNECT proxy
 * lived in the old engine process, so a new one listens on the same socket; the relay inside the
 * sandbox (which outlives the engine and dials that socket per connection) is kept when it still
 * listens, or started again. `open`: slirp4netns outlives the engine too and is kept when it is
 * still the recorded process, or started again with a fresh filter. A paused sandbox is frozen, so
 * nothing can be started in it: its helpers must still be there.
 */
export async function adoptNetwork(
  host: Host,
  proc: SandboxProcess,
  mode: "off" | "restricted" | "open",
  allow: string[],
  config: EngineConfig,
  paused: boolean,
): Promise<NetworkHandle> {
  if (mode === "off") return { mode, close: async () => undefined };
  if (mode === "restricted") {
    const proxy = await listenEgress(proc, allow, config);
    if (relayListening(proc, PROXY_PORT)) return { mode, close: () => proxy.close() };
    if (paused) {
      await proxy.close();
      throw new Error("its egress relay is gone and it is paused");
    }
    try {
      const relay = await startEgressRelay(proc, proxy.sock);
      return { mode, close: async () => (await relay.close(), await proxy.close()) };
    } catch (e) {
      await proxy.close();
      throw e;
    }
  }
  if (!host.slirp4netns) throw new Error("slirp4netns is not installed");
  const running = proc.helper("slirp4netns");
  if (running !== null) {
    const filter = openFilterHandle(proc);
    return {
      mode,
      close: async () => {
        // Checked again at close: the recorded pid may belong to another process by then.
        const pid = proc.helper("slirp4netns");
        if (pid !== null) process.kill(pid, "SIGKILL");
        await filter.remove();
      },
    };
  }
  if (paused) throw new Error("its slirp4netns is gone and it is paused");
  await openFilterHandle(proc).remove();
  return startNetwork(host, proc, mode, allow, config);
}

/** The per-sandbox CONNECT proxy in the engine, on a socket only the sandbox's uid may use. */
async function listenEgress(
  proc: SandboxProcess,
  allow: string[],
  config: EngineConfig,
): Promise<{ sock: string; close(): Promise<void> }> {
  const sock = path.join(proc.spec.dir, "egress.sock");
  fs.rmSync(sock, { force: true });
  const proxy = new EgressProxy(allow, config.egressHosts);
  await proxy.listen(sock);
  try {
    fs.chownSync(sock, proc.spec.uid, proc.spec.uid);
  } catch (e) {
    await proxy.close();
    throw e;
  }
  return {
    sock,
    close: async () => {
      await proxy.close();
      fs.rmSync(sock, { force: true });
    },
  };
}

/**
 * The relay lives in the sandbox's netns only, as the sandbox's own uid without capabilities (it
 * only needs the socket, handed to that uid), and in the sandbox's cgroups: the process it forks per
 * connection counts against the sandbox's pids and memory caps, not the host's. socat's default
 * listen backlog (5) made every sixth parallel connection wait a 1 s SYN retransmit: hence
 * backlog=128. For a sandbox that survives the engine it survives too (sandbox-socat.ts).
 */
async function startEgressRelay(proc: SandboxProcess, sock: string): Promise<{ close(): Promise<void> }> {
  const relay = spawnSocatInSandboxNet(
    proc,
    `TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr,backlog=128,max-children=${RELAY_MAX_CONNECTIONS}`,
    // Relative to the sandbox's directory (socat's cwd): see spawnSocatInSandboxNet.
    `UNIX-CONNECT:${path.relative(proc.spec.dir, sock)}`,
    { outliveEngine: proc.survivesEngine, cwd: proc.spec.dir },
  );
  let relayErr = "";
  relay.stderr?.on("data", (d: Buffer) => (relayErr = (relayErr + d.toString()).slice(-2000)));
  relay.on("error", (e) => (relayErr += ` ${e.message}`));
  try {
    if (relay.pid === undefined) throw new Error("could not start the egress relay (nsenter)");
    // Before it listens, so not one connection is handled outside the cgroups.
    proc.cgroup.attach(relay.pid);
    await waitListening(relay, proc, PROXY_PORT);
  } catch (e) {
    await killAndWait(relay);
    throw new Error(`${(e as Error).message}${relayErr.trim() ? ` (${relayErr.trim()})` : ""}`);
  }
  relay.unref();
  return { close: () => killAndWait(relay) };
}

/**
 * slirp4netns opens the sandbox's outbound sockets on the host, as root. It runs with the
 * sandbox's gid so a per-sandbox nftables table can keep those sockets off the host's own
 * addresses and private networks (--disable-host-loopback alone only covers 10.0.2.2). A sandbox
 * that survives the engine keeps it: no --exit-fd tied to the engine, its own session, its log in a
 * file rather than a pipe to the engine, and its pid and start time in the adoption record. It is in
 * the sandbox's cgroups, so it dies with the sandbox.
 */
async function startSlirp(bin: string, proc: SandboxProcess): Promise<{ close(): Promise<void> }> {
  const gid = proc.spec.uid;
  const netns = `/proc/${proc.targetPid}/ns/net`;
  const outlive = proc.survivesEngine && proc.holderRoot !== null;
  const logPath = outlive ? path.join(holdersDir(proc.holderRoot!), `${proc.spec.id}.slirp.log`) : null;
  const logFd = logPath ? fs.openSync(logPath, "w", 0o600) : null;
  let slirp: ChildProcess;
  try {
    slirp = spawn(
      bin,
      // --enable-sandbox/--enable-seccomp: slirp4netns parses the sandbox's packets as root, so it
      // confines itself (own mount namespace, dropped capabilities, syscall filter) once set up.
      [
        "--configure",
        "--mtu=65520",
        "--disable-host-loopback",
        "--enable-sandbox",
        "--enable-seccomp",
        "--ready-fd=3",
        ...(outlive ? [] : ["--exit-fd=4"]),
        "--netns-type=path",
        netns,
        "tap0",
      ],
      {
        stdio: ["ignore", "ignore", logFd ?? "pipe", "pipe", outlive ? "ignore" : "pipe"],
        gid,
        detached: outlive,
      },
    );
  } finally {
    if (logFd !== null) fs.closeSync(logFd);
  }
  let stderr = "";
  slirp.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const errors = () => (logPath ? readTail(logPath) : stderr).trim();
  for (const s of slirp.stdio) s?.on("error", () => undefined);
  try {
    // Its memory and CPU are the sandbox's traffic: charge them to the sandbox (and freeze it on pause).
    if (slirp.pid !== undefined) proc.cgroup.attach(slirp.pid);
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`slirp4netns not ready within 5 s: ${errors()}`)), 5000);
      (slirp.stdio[3] as NodeJS.ReadableStream).once("data", () => {
        clearTimeout(t);
        resolve();
      });
      slirp.once("error", (e) => {
        clearTimeout(t);
        reject(e);
      });
      slirp.once("exit", (code) => {
        clearTimeout(t);
        reject(new Error(`slirp4netns exited (${code}): ${errors()}`));
      });
    });
  } catch (e) {
    await killAndWait(slirp);
    throw e;
  }
  if (outlive && slirp.pid !== undefined) {
    proc.recordHelper("slirp4netns", slirp.pid);
    (slirp.stdio[3] as unknown as { destroy(): void }).destroy();
    slirp.unref();
  }
  return {
    close: async () => {
      // Closing the exit fd asks slirp4netns to stop; SIGKILL if it lingers.
      (slirp.stdio[4] as NodeJS.WritableStream | null)?.end();
      await killAndWait(slirp, outlive ? 0 : 500);
    },
  };
}

function readTail(file: string): string {
  try {
    return fs.readFileSync(file, "utf8").slice(-2000);
  } catch {
    return "";
  }
}

const NFT_PREFIX = "baton_open_";
let nftWarned = false;
let staleReaped = false;

function nft(args: string[], input?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile("nft", args, { timeout: 5000 }, (err, _out, stderr) =>
      err ? reject(new Error(`nft ${args.join(" ")}: ${String(stderr).trim() || err.message}`)) : resolve(),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

/**
 * A sandbox's table is named after the process that bounds its life (SandboxProcess.ownerPid: its
 * holder, which outlives engine restarts), so stale tables are those whose owner is gone.
 */
function filterTable(proc: SandboxProcess): string {
  return `${NFT_PREFIX}${proc.ownerPid}_${proc.spec.id.toLowerCase().replace(/[^a-z0-9]/g, "_")}`;
}

/** The removal handle of an adopted sandbox's table (installed by an earlier engine process). */
function openFilterHandle(proc: SandboxProcess): { remove(): Promise<void> } {
  const table = filterTable(proc);
  return { remove: () => nft(["delete", "table", "inet", table]).catch(() => undefined) };
}

/** Tables whose owner (a holder, or an engine for sandboxes that died with it) is gone. */
async function reapStaleFilters(): Promise<void> {
  if (staleReaped) return;
  staleReaped = true;
  const out = await new Promise<string>((resolve) =>
    execFile("nft", ["list", "tables"], { timeout: 5000 }, (err, stdout) => resolve(err ? "" : stdout)),
  );
  for (const line of out.split("\n")) {
    const m = line.match(new RegExp(`^table inet (${NFT_PREFIX}(\\d+)_\\w+)$`));
    if (!m || Number(m[2]) === process.pid) continue;
    let alive = true;
    try {
      process.kill(Number(m[2]), 0);
    } catch (e) {
      alive = (e as NodeJS.ErrnoException).code === "EPERM";
    }
    if (!alive) await nft(["delete", "table", "inet", m[1]!]).catch(() => undefined);
  }
}

/** The host's DNS servers: slirp4netns forwards the sandbox's 10.0.2.3 to them, so port 53 there stays open. */
function hostNameservers(): { v4: string[]; v6: string[] } {
  const v4: string[] = [];
  const v6: string[] = [];
  try {
    for (const line of fs.readFileSync("/etc/resolv.conf", "utf8").split("\n")) {
      const m = line.match(/^\s*nameserver\s+(\S+)/);
      const ip = m?.[1]?.replace(/%.*$/, "");
      if (ip && net.isIPv4(ip)) v4.push(ip);
      else if (ip && net.isIPv6(ip)) v6.push(ip);
    }
  } catch {
    /* no resolv.conf: no exception needed */
  }
  return { v4, v6 };
}

/**
 * A per-sandbox nftables table on the host's output hook: packets from sockets whose gid is the
 * sandbox's (its slirp4netns) are refused towards the host's own addresses (`fib daddr type
 * local`), loopback, private, link-local and reserved ranges, except DNS to the host's resolvers.
 * Without nft the sandbox still gets NAT, and the engine says once that this filter is missing.
 */
async function installOpenFilter(proc: SandboxProcess): Promise<{ remove(): Promise<void> }> {
  const gid = proc.spec.uid;
  const table = filterTable(proc);
  await reapStaleFilters();
  const dns = hostNameservers();
  const refuse = (match: string) => [
    `${match} meta l4proto tcp reject with tcp reset`,
    `${match} reject with icmpx type admin-prohibited`,
  ];
  const rules = [
    ...(dns.v4.length ? [`ip daddr { ${dns.v4.join(", ")} } meta l4proto { tcp, udp } th dport 53 accept`] : []),
    ...(dns.v6.length ? [`ip6 daddr { ${dns.v6.join(", ")} } meta l4proto { tcp, udp } th dport 53 accept`] : []),
    ...refuse("fib daddr type local"),
    ...refuse(`ip daddr { ${FORBIDDEN_V4.join(", ")} }`),
    ...refuse(`ip6 daddr { ${FORBIDDEN_V6.join(", ")} }`),
  ];
  const script = [
    `table inet ${table} {`,
    `  chain out { type filter hook output priority filter; policy accept; meta skgid ${gid} jump guard; }`,
    `  chain guard {`,
    ...rules.map((r) => `    ${r}`),
    `  }`,
    `}`,
    "",
  ].join("\n");
  try {
    await nft(["-f", "-"], script);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT" || /ENOENT|not found/.test((e as Error).message)) {
      if (!nftWarned) {
        nftWarned = true;
        console.error(
          '[engine] degraded: nft (nftables) is not installed, so network "open" sandboxes can reach the host\'s non-loopback addresses and private networks',
        );
      }
      return { remove: async () => undefined };
    }
    throw new Error(`could not install the network "open" filter: ${(e as Error).message}`);
  }
  let removed = false;
  return {
    remove: async () => {
      if (removed) return;
      removed = true;
      await nft(["delete", "table", "inet", table]).catch(() => undefined);
    },
  };
}

/**
 * Stops a helper: `graceMs` to leave by itself, then SIGKILL. The wait after SIGKILL is bounded:
 * a helper in a paused sandbox's cgroup is frozen and only dies when the sandbox's teardown
 * (which follows, and kills everything in the cgroup) thaws it.
 */
async function killAndWait(child: ChildProcess, graceMs = 0, killWaitMs = 1000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  if (graceMs) await Promise.race([exited, sleep(graceMs)]);
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await Promise.race([exited, sleep(killWaitMs)]);
}

function relayListening(proc: SandboxProcess, port: number): boolean {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  try {
    return fs.readFileSync(`/proc/${proc.targetPid}/net/tcp`, "utf8").includes(`0100007F:${hexPort} 00000000:0000 0A`);
  } catch {
    return false;
  }
}

/** Waits until the relay listens inside the sandbox (read from the netns's /proc/net/tcp). */
async function waitListening(relay: ChildProcess, proc: SandboxProcess, port: number): Promise<void> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const file = `/proc/${proc.targetPid}/net/tcp`;
  for (let i = 0; i < 500; i++) {
    if (relay.exitCode !== null) throw new Error(`egress relay exited with ${relay.exitCode}`);
    const table = fs.readFileSync(file, "utf8");
    if (table.includes(`0100007F:${hexPort} 00000000:0000 0A`)) return;
    await sleep(2);
  }
  throw new Error("egress relay did not start listening within 1 s");
}
