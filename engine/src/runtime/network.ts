import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { EngineConfig } from "../config.js";
import { EgressProxy } from "../services/egress-proxy.js";
import { sleep } from "../lib/time.js";
import type { Host } from "./host.js";
import type { SandboxProcess } from "./sandbox-proc.js";

/** In-sandbox address of the allow-listing proxy (restricted mode). */
export const PROXY_PORT = 3128;

export interface NetworkHandle {
  mode: "off" | "restricted" | "open";
  close(): Promise<void>;
}

/**
 * Gives a sandbox its network mode. Every sandbox starts with its own network namespace holding
 * only loopback (`off`). `restricted` adds a relay on the sandbox's 127.0.0.1:3128 to a per-sandbox
 * CONNECT proxy in the engine that admits only HTTPS to allow-listed hosts: the sandbox has no
 * route anywhere else. `open` adds user-mode NAT (slirp4netns) without host-loopback access.
 */
export async function startNetwork(host: Host, proc: SandboxProcess, mode: "off" | "restricted" | "open", allow: string[], config: EngineConfig): Promise<NetworkHandle> {
  const netns = `/proc/${proc.targetPid}/ns/net`;
  if (mode === "off") return { mode, close: async () => undefined };
  if (mode === "restricted") {
    const sock = path.join(proc.spec.dir, "egress.sock");
    const proxy = new EgressProxy(allow, config.egressHosts);
    await proxy.listen(sock);
    // The relay process lives in the sandbox's netns only; PDEATHSIG ends it with the engine.
    const relay = spawn("nsenter", [`--net=${netns}`, "--", "setpriv", "--pdeathsig", "KILL", "--", "socat", `TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${sock}`], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    try {
      await waitListening(relay, proc, PROXY_PORT);
    } catch (e) {
      relay.kill("SIGKILL");
      await proxy.close();
      throw e;
    }
    return {
      mode,
      close: async () => {
        await killAndWait(relay);
        await proxy.close();
        fs.rmSync(sock, { force: true });
      },
    };
  }
  if (!host.slirp4netns) throw new Error("slirp4netns is not installed");
  const slirp = spawn(
    host.slirp4netns,
    ["--configure", "--mtu=65520", "--disable-host-loopback", "--ready-fd=3", "--exit-fd=4", "--netns-type=path", netns, "tap0"],
    { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] },
  );
  let stderr = "";
  slirp.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`slirp4netns not ready within 5 s: ${stderr.trim()}`)), 5000);
    (slirp.stdio[3] as NodeJS.ReadableStream).once("data", () => {
      clearTimeout(t);
      resolve();
    });
    slirp.once("exit", (code) => {
      clearTimeout(t);
      reject(new Error(`slirp4netns exited (${code}): ${stderr.trim()}`));
    });
  });
  return {
    mode,
    close: async () => {
      // Closing the exit fd asks slirp4netns to stop; SIGKILL if it lingers.
      (slirp.stdio[4] as NodeJS.WritableStream).end();
      await killAndWait(slirp, 500);
    },
  };
}

async function killAndWait(child: ChildProcess, graceMs = 0): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  if (graceMs) await Promise.race([exited, sleep(graceMs)]);
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await exited;
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
