import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareHolder } from "../src/runtime/holder.js";
import { HeldPty } from "../src/services/pty/held.js";
import { eventually } from "./helpers/async.js";

/**
 * The holder (runtime/holder/baton-holder.c) against the engine's side of its protocol
 * (services/pty/held.ts), without a sandbox: a terminal whose program never reads its input
 * must keep working as a terminal, and the holder must never block on it.
 */

let bin: string;
let dir: string;
const pids: number[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-held-pty-"));
  const h = prepareHolder({ disabled: false, stateDir: dir });
  if (h.path === null) throw new Error(h.reason);
  bin = h.path;
});

afterAll(() => {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a held terminal whose program does not read its input", () => {
  it("keeps its output, flow control and exit working while a paste waits, and takes the paste once read", async () => {
    // Not canonical: the line discipline takes no more than its buffer, the rest waits for a reader.
    // SIGUSR1 makes the program start reading (and stop writing).
    const script = "stty -icanon -echo; trap 'cat >/dev/null' USR1; echo ready; while :; do echo out; done";
    const held = await HeldPty.spawn(
      bin,
      path.join(dir, "t1.sock"),
      { file: "/bin/sh", args: ["-c", script], env: { PATH: "/usr/bin:/bin" } },
      80,
      24,
    );
    pids.push(held.holderPid, held.pid);
    let bytes = 0;
    let text = "";
    held.onData((d) => {
      bytes += d.length;
      if (text.length < 100) text += d.toString();
    });
    let drains = 0;
    held.onDrain(() => drains++);
    const exit = new Promise<{ exitCode: number; signal?: number }>((r) => held.onExit(r));
    await eventually(() => expect(text).toContain("ready"));

    // Far more than the terminal, the holder's queue and the socket hold.
    expect(held.write(Buffer.alloc(4 * 1024 * 1024, "x"))).toBe(false);
    await sleep(1000);
    expect(drains).toBe(0);

    // Output still flows...
    const before = bytes;
    await eventually(() => expect(bytes - before).toBeGreaterThan(256 * 1024), { timeout: 30_000 });
    // ...flow control still reaches the holder: paused, output stops...
    held.pause();
    await eventually(
      async () => {
        const at = bytes;
        await sleep(300);
        expect(bytes).toBe(at);
      },
      { timeout: 30_000 },
    );
    // ...and flows again on resume.
    const paused = bytes;
    held.resume();
    await eventually(() => expect(bytes - paused).toBeGreaterThan(64 * 1024), { timeout: 30_000 });

    // Another client is still served (the engine after a restart).
    const again = await HeldPty.connect(path.join(dir, "t1.sock"));
    expect(again.pid).toBe(held.pid);
    again.detach();

    // Once the program reads, the paste goes through and the engine hears it drained.
    process.kill(held.pid, "SIGUSR1");
    await eventually(() => expect(drains).toBeGreaterThan(0), { timeout: 30_000 });

    // The holder still reaps its child and reports how it ended.
    process.kill(held.pid, "SIGKILL");
    expect(await exit).toEqual({ exitCode: 0, signal: 9 });
  }, 120_000);
});

describe("the sandbox holder's kill command", () => {
  it("is understood when it comes in pieces", async () => {
    const sock = path.join(dir, "k1.sock");
    const holder = spawn(bin, [sock, "/bin/sleep", "1000"], { stdio: "ignore", detached: true });
    pids.push(holder.pid!);
    const exited = new Promise<number | null>((r) => holder.once("exit", (code) => r(code)));
    let c: net.Socket | null = null;
    await eventually(async () => {
      c = await new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect(sock, () => resolve(s));
        s.once("error", reject);
      });
    });
    const conn = c as unknown as net.Socket;
    let got = "";
    conn.on("data", (d: Buffer) => (got += d.toString()));
    await eventually(() => expect(got).toMatch(/^hello \d+ \d+\n/));
    // Not a command: ignored, up to its newline.
    conn.write("killing\n");
    await sleep(300);
    expect(got).not.toContain("signal");
    conn.write("ki");
    await sleep(300);
    conn.write("ll\n");
    await eventually(() => expect(got).toMatch(/\nsignal 9\n$/), { timeout: 10_000 });
    expect(await exited).toBe(0);
  });
});
