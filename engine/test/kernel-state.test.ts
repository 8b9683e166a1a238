import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import WebSocket from "ws";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";
import { eventually, until } from "./helpers/async.js";
import { hostProcesses } from "./helpers/procs.js";
import { createTemplate, stepOutput, waitBuilt } from "./helpers/templates.js";

/**
 * Issue 20, item 1: no sandbox, terminal or template build may write the host kernel's state. An
 * outside review owned the machine from a build step: builds ran as the host's uid 0 (capabilities
 * dropped, but the kernel lets that uid write most of /proc/sys without any), their /proc/sys was
 * writable, and /proc/mounts named the build's layer by its host path. The step wrote a script
 * into its layer, set kernel.core_pattern to "|<host path of that script>" and crashed a process:
 * the kernel ran the script as the host's root, in the host's namespaces.
 *
 * These tests write real host sysctls when the isolation is broken (as on the old code). Every
 * value they may touch is read first and written back afterwards, whatever the outcome.
 */

const CORE_PATTERN = "/proc/sys/kernel/core_pattern";
const originalCorePattern = fs.readFileSync(CORE_PATTERN, "utf8");

function restoreHost(): void {
  if (fs.readFileSync(CORE_PATTERN, "utf8") !== originalCorePattern)
    fs.writeFileSync(CORE_PATTERN, originalCorePattern.trimEnd());
}
afterEach(restoreHost);
afterAll(restoreHost);

/**
 * Tries each write and says what happened, one line each: "wrote", "refused" or "absent". The
 * values are harmless should they land: a core_pattern the test restores, a page-cache drop, and
 * sysrq's help text to the kernel log.
 */
const WRITE_PROBE = [
  'w() { if [ ! -e "$1" ]; then echo "absent $1"; elif (printf \'%s\\n\' "$2" > "$1") 2>/dev/null; then echo "wrote $1"; else echo "refused $1"; fi; }',
  "w /proc/sys/kernel/core_pattern baton-core-probe",
  "w /proc/sys/vm/drop_caches 1",
  "w /proc/sysrq-trigger h",
  "grep -E ' /proc/(sys|sysrq-trigger|irq|bus) ' /proc/self/mountinfo | awk '{print \"mount \" $5 \" \" $6}'",
  "echo probe-done",
].join("\n");

/** Parses WRITE_PROBE's output: each target's outcome, and the options /proc's covered paths are mounted with. */
function probeResult(out: string): { writes: Record<string, string>; mounts: Record<string, string> } {
  const writes: Record<string, string> = {};
  const mounts: Record<string, string> = {};
  // A terminal ends lines with \r\n and may put control sequences before a \r: split on either.
  for (const line of out.split(/[\r\n]+/)) {
    const w = /^(wrote|refused|absent) (\S+)$/.exec(line);
    if (w) writes[w[2]!] = w[1]!;
    const m = /^mount (\S+) (\S+)$/.exec(line);
    if (m) mounts[m[1]!] = m[2]!.split(",")[0]!;
  }
  return { writes, mounts };
}

/** What every sandbox, terminal and build must show: no write landed, and /proc/sys is read-only. */
function expectKernelStateClosed(out: string): void {
  const { writes, mounts } = probeResult(out);
  expect(writes, out).toEqual({
    "/proc/sys/kernel/core_pattern": "refused",
    "/proc/sys/vm/drop_caches": "refused",
    "/proc/sysrq-trigger": fs.existsSync("/proc/sysrq-trigger") ? "refused" : "absent",
  });
  expect(mounts["/proc/sys"], out).toBe("ro");
  if (fs.existsSync("/proc/sysrq-trigger")) expect(mounts["/proc/sysrq-trigger"], out).toBe("ro");
  expect(fs.readFileSync(CORE_PATTERN, "utf8")).toBe(originalCorePattern);
}

/** Runs `steps` as a template build and returns each step's output (the build must succeed). */
async function buildOutput(e: EngineHandle, name: string, steps: string[]): Promise<string[]> {
  const t = await waitBuilt(e, (await createTemplate(e, { name, steps })).id, 120_000);
  expect(t.status, JSON.stringify(t.error)).toBe("ready");
  return Promise.all(steps.map((_, i) => stepOutput(e, t.id, i)));
}

/** Host uids of every process whose command line contains `marker` (the four of /proc/PID/status's Uid line). */
function hostUidsOf(marker: string): number[][] {
  return hostProcesses()
    .filter((p) => p.cmdline.includes(marker))
    .map((p) => p.uids);
}

describe("host kernel state (issue 20, item 1)", () => {
  let e: EngineHandle;
  beforeAll(async () => {
    e = await startEngine();
  }, 60_000);
  afterAll(async () => {
    await e?.stop();
  });

  it("a build step cannot write kernel.core_pattern, vm.drop_caches or /proc/sysrq-trigger", async () => {
    const [out] = await buildOutput(e, "kernel-writes", [WRITE_PROBE]);
    expectKernelStateClosed(out!);
  }, 150_000);

  it("a plain exec cannot write them either", async () => {
    const s = await createSandbox(e);
    const r = await exec(e, s, WRITE_PROBE);
    expectKernelStateClosed(r.stdout);
  }, 60_000);

  it("nor can a terminal (PTY session)", async () => {
    const s = await createSandbox(e);
    const pty = await e.api("POST", `/sandboxes/${s}/pty`, {});
    expect(pty.status, pty.text).toBe(201);
    const ws = new WebSocket(e.origin.replace(/^http/, "ws") + pty.body.ws_path, {
      headers: { authorization: `Bearer ${e.token}` },
    });
    let out = "";
    ws.on("message", (data, isBinary) => {
      if (isBinary) out += Buffer.isBuffer(data) ? data.toString("utf8") : "";
    });
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    try {
      // The probe's lines are sent as a script the shell reads, so its echo does not look like a result.
      const script = Buffer.from(WRITE_PROBE).toString("base64");
      ws.send(
        Buffer.from(
          `echo ${script} | base64 -d > /tmp/probe.sh; sh /tmp/probe.sh > /tmp/probe.out; cat /tmp/probe.out\r`,
        ),
      );
      await until("the probe's output in the terminal", () => /^probe-done\r?$/m.test(out), { timeout: 20_000 });
      expectKernelStateClosed(out);
    } finally {
      ws.close();
    }
  }, 60_000);

  it("the whole chain fails: a build learns no host path, cannot point core_pattern at its layer, and a crash runs nothing on the host", async () => {
    // A harmless marker instead of a script with effects: the file the "exploit" would create on the host.
    const marker = path.join(os.tmpdir(), `baton-core-marker-${randomBytes(6).toString("hex")}`);
    try {
      const steps = [
        [
          "set +e",
          `printf '#!/bin/sh\\ntouch ${marker}\\n' > /opt/baton-crash.sh && chmod 755 /opt/baton-crash.sh`,
          // Where the layer is on the host, as the review read it: the root overlay's upperdir.
          "layer=$(sed -n 's/^[^ ]* \\/ overlay .*upperdir=\\([^,]*\\).*/\\1/p' /proc/mounts | head -n1)",
          'echo "layer=$layer"',
          "echo '<<mounts>>'; cat /proc/mounts; echo '<<mountinfo>>'; cat /proc/self/mountinfo; echo '<<end>>'",
          `if (printf '|%s/opt/baton-crash.sh\\n' "$layer" > /proc/sys/kernel/core_pattern) 2>/dev/null; then echo core-pattern-set; else echo core-pattern-refused; fi`,
          "ulimit -c unlimited 2>/dev/null",
          "sh -c 'kill -SEGV $$'",
          "sleep 1",
          "exit 0",
        ].join("\n"),
      ];
      const [out] = await buildOutput(e, "core-chain", steps);
      const mounts = out!.slice(out!.indexOf("<<mounts>>"), out!.indexOf("<<end>>"));
      expect(mounts.length).toBeGreaterThan(100);
      // The kernel runs a core_pattern pipe at once; give it time to have run it, were it set.
      await new Promise((r) => setTimeout(r, 1500));
      // All facts at once, so a failure shows how far the chain got.
      expect({
        // No host directory names: neither the engine's data directory nor its templates directory.
        hostPathsInMountTable: [e.dataDir!, "/templates/", "tmpl_"].filter((name) => mounts.includes(name)),
        corePattern: /core-pattern-(set|refused)/.exec(out!)?.[0],
        ranOnHost: fs.existsSync(marker),
        hostCorePatternUnchanged: fs.readFileSync(CORE_PATTERN, "utf8") === originalCorePattern,
      }).toEqual({
        hostPathsInMountTable: [],
        corePattern: "core-pattern-refused",
        ranOnHost: false,
        hostCorePatternUnchanged: true,
      });
    } finally {
      restoreHost();
      fs.rmSync(marker, { force: true });
    }
  }, 150_000);

  it("a build's root is not the host's uid 0: every process of it is the build slot's unprivileged uid", async () => {
    const tag = `baton-uid-probe-${randomBytes(4).toString("hex")}`;
    const t = await createTemplate(e, { name: "build-uid", steps: [`sh -c 'sleep 6' ${tag}`] });
    try {
      const seen = await until("the build step's process on the host", () => {
        const uids = hostUidsOf(tag);
        return uids.length ? uids : null;
      });
      const builds = (await e.api("GET", "/sandboxes/limits")).body.isolation.builds;
      const [low, high] = (builds.host_uids as string).split("-").map(Number);
      for (const ids of seen) {
        expect(
          ids.some((id) => id === 0),
          `host uids ${ids.join(" ")}`,
        ).toBe(false);
        for (const id of ids) {
          expect(id).toBeGreaterThanOrEqual(low!);
          expect(id).toBeLessThanOrEqual(high!);
        }
      }
    } finally {
      await e.api("DELETE", `/templates/${t.id}`);
    }
  }, 60_000);

  it("the isolation report names the read-only and masked /proc paths, and says /sys is not mounted", async () => {
    const iso = (await e.api("GET", "/sandboxes/limits")).body.isolation;
    expect(iso.proc.read_only).toEqual(expect.arrayContaining(["/proc/sys", "/proc/irq", "/proc/bus"]));
    if (fs.existsSync("/proc/sysrq-trigger")) expect(iso.proc.read_only).toContain("/proc/sysrq-trigger");
    if (fs.existsSync("/proc/kcore")) expect(iso.proc.masked).toContain("/proc/kcore");
    expect(iso.sys).toBe("not mounted");
    expect(iso.builds.user).toBe("userns-root");
    expect(iso.enforced.join("\n")).toMatch(/\/proc\/sys.*read-only/);
    // What the report says is what a sandbox gets.
    const s = await createSandbox(e);
    const r = await exec(e, s, "cat /proc/self/mountinfo; ls /sys 2>&1 || true");
    for (const p of [...iso.proc.read_only, ...iso.proc.masked] as string[])
      expect(r.stdout, p).toMatch(new RegExp(` ${p.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} ro,`));
    expect(r.stdout).toMatch(/No such file or directory/);
    await eventually(() => expect(fs.readFileSync(CORE_PATTERN, "utf8")).toBe(originalCorePattern));
  }, 60_000);
});
