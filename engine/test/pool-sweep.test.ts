import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EngineConfig } from "../src/config.js";
import { procStartTime } from "../src/runtime/holder.js";
import { rememberPoolMember, sweepPoolLeftovers } from "../src/services/sandboxes/pool-boot.js";
import { until } from "./helpers/async.js";

// At start the engine ends the pool members a crashed run left behind, by the pid in each marker.
// A pid is reused once its process is gone, and a sandbox uid is handed out again: the marker's
// start time is what keeps the sweep from killing whichever process holds that pid now.

const KEY = "sbx_pool" + "ab".repeat(12);
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

function tempConfig(): EngineConfig {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "baton-pool-sweep-"));
  return { root } as EngineConfig;
}

function sleeper(): ChildProcess {
  const child = spawn("sleep", ["60"], { stdio: "ignore" });
  children.push(child);
  return child;
}

const alive = (pid: number) => procStartTime(pid) !== null;

describe("sweeping an earlier run's pool members", () => {
  it("kills the process the marker names: same pid, same start time, same uid", async () => {
    const config = tempConfig();
    const member = sleeper();
    rememberPoolMember(config, KEY, process.getuid!(), member.pid!);
    expect(await sweepPoolLeftovers(config, false)).toBe(1);
    expect(await until("the member ended", () => member.signalCode)).toBe("SIGKILL");
    expect(fs.readdirSync(path.join(config.root, "pool"))).toEqual([]);
  });

  it("leaves alone a process that holds the pid now but started after the member", async () => {
    const config = tempConfig();
    const stranger = sleeper();
    await until("the process runs", () => alive(stranger.pid!));
    // The marker of a member that had this pid and uid once, and is gone: its start time differs.
    rememberPoolMember(config, KEY, process.getuid!(), stranger.pid!);
    const file = path.join(config.root, "pool", `${KEY}.json`);
    const marker = JSON.parse(fs.readFileSync(file, "utf8")) as { start: string };
    marker.start = String(Number(marker.start) - 1);
    fs.writeFileSync(file, JSON.stringify(marker));
    expect(await sweepPoolLeftovers(config, false)).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(stranger.pid!)).toBe(true);
    expect(stranger.signalCode).toBeNull();
  });
});
