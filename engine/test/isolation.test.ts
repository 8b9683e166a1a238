import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cgroupNameOf,
  createSandbox,
  exec,
  startEngine,
  type EngineHandle,
  enginePath,
  inEngineMountNs,
} from "./helpers/engine.js";
import { until } from "./helpers/async.js";

/**
 * What one sandbox can see and do to the host, the engine and other sandboxes, checked from both
 * sides: commands inside the sandbox, and the host's view (/proc, the engine's cgroups).
 */

const execFileP = promisify(execFile);

let e: EngineHandle;
const created: string[] = [];
let A: string;
let B: string;
const SECRET = `b-secret-${randomBytes(12).toString("hex")}`;

async function sandbox(body: Record<string, unknown> = {}): Promise<string> {
  const id = await createSandbox(e, body);
  created.push(id);
  return id;
}

async function run(id: string, command: string, timeout_seconds = 30) {
  return exec(e, id, command, { timeout_seconds });
}

/**
 * The engine's cgroup directory of a sandbox for one v1 controller:
 * /sys/fs/cgroup/<controller>/**\/baton-<instance>/<opaque name of id>, found by a bounded walk.
 */
function cgroupDir(controller: string, id: string): string | null {
  const root = `/sys/fs/cgroup/${controller}`;
  let level = [root];
  let visited = 0;
  for (let depth = 0; depth < 8 && level.length && visited < 20_000; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(dir, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const ent of entries) {
        if (!ent.isDirectory()) continue;
        visited++;
        const p = path.join(dir, ent.name);
        const name = cgroupNameOf(e, id);
        if (ent.name.startsWith("baton-") && fs.existsSync(path.join(p, name, "cgroup.procs")))
          return path.join(p, name);
        next.push(p);
      }
    }
    level = next;
  }
  return null;
}

function procsOf(id: string): number[] {
  const dir = cgroupDir("pids", id);
  if (!dir) return [];
  return fs.readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
}

function statusUids(pid: number): number[] | null {
  try {
    const line = fs
      .readFileSync(`/proc/${pid}/status`, "utf8")
      .split("\n")
      .find((l) => l.startsWith("Uid:"));
    return line ? line.split(/\s+/).slice(1, 5).map(Number) : null;
  } catch {
    return null;
  }
}

function comm(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

/** The sandbox's host uid, read from its resident processes on the host. */
function hostUid(id: string): number {
  const uids = new Set<number>();
  for (const pid of procsOf(id)) {
    const u = statusUids(pid);
    if (u) for (const x of u) uids.add(x);
  }
  expect(uids.size, `uids of ${id}: ${[...uids].join(",")}`).toBe(1);
  return [...uids][0]!;
}

beforeAll(async () => {
  e = await startEngine();
  A = await sandbox();
  B = await sandbox();
  const w = await run(
    B,
    `printf '%s' '${SECRET}' > /workspace/secret.txt && printf '%s' '${SECRET}' > /tmp/secret.txt && cat /workspace/secret.txt`,
  );
  expect(w.stdout).toBe(SECRET);
}, 90_000);

/** Never lets one cleanup step hold up the ones after it. */
function bounded<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  return Promise.race([p.catch(() => undefined), new Promise<undefined>((r) => setTimeout(() => r(undefined), ms))]);
}

afterAll(async () => {
  for (const id of created) await bounded(e?.api("DELETE", `/sandboxes/${id}`) ?? Promise.resolve(), 5000);
  if (e && (await bounded(e.stop(), 15_000)) === undefined && e.proc?.exitCode === null) e.proc.kill("SIGKILL");
  if (e?.dataDir) fs.rmSync(e.dataDir, { recursive: true, force: true });
}, 60_000);

describe("filesystem isolation", () => {
  it("A cannot see B's workspace or tmp by any path", async () => {
    const bDir = path.join(e.dataDir!, "engine", "sbx", B);
    const attempts = [
      "ls -la /proc/*/root/workspace /proc/*/root/tmp",
      "cat /proc/*/root/workspace/secret.txt /proc/*/root/tmp/secret.txt",
      `cat ${bDir}/workspace/secret.txt ${bDir}/tmp/secret.txt`,
      `ls -la ${bDir} ${path.dirname(bDir)}`,
      "grep -rs --max-count=1 b-secret- / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr",
      "find / -xdev -name secret.txt 2>/dev/null",
    ];
    for (const cmd of attempts) {
      const r = await run(A, `${cmd} 2>&1; true`);
      expect(r.stdout + r.stderr, cmd).not.toContain(SECRET);
    }
    // B's own view is intact.
    expect((await run(B, "cat /workspace/secret.txt")).stdout).toBe(SECRET);
  });

  it("on the host, A's uid cannot read B's directory (0700 per uid)", async () => {
    const uidA = hostUid(A);
    const uidB = hostUid(B);
    expect(uidA).not.toBe(uidB);
    const secretPath = path.join(e.dataDir!, "engine", "sbx", B, "workspace", "secret.txt");
    expect(fs.readFileSync(enginePath(e, secretPath), "utf8")).toBe(SECRET);
    const st = fs.statSync(enginePath(e, path.dirname(secretPath)));
    expect(st.uid).toBe(uidB);
    expect(st.mode & 0o777).toBe(0o700);
    // Inside the engine's mount namespace, where the workspace really is: A's uid is refused.
    const [ns, ...nsArgs] = inEngineMountNs(e);
    const r = await execFileP(ns!, [
      ...nsArgs,
      "setpriv",
      `--reuid=${uidA}`,
      `--regid=${uidA}`,
      "--clear-groups",
      "cat",
      secretPath,
    ]).then(
      (o) => ({ code: 0, out: o.stdout + o.stderr }),
      (err: { code?: number; stdout?: string; stderr?: string }) => ({
        code: err.code ?? -1,
        out: `${err.stdout ?? ""}${err.stderr ?? ""}`,
      }),
    );
    expect(r.code).not.toBe(0);
    expect(r.out).toContain("Permission denied");
    expect(r.out).not.toContain(SECRET);
  });

  it("A cannot see the engine's data dir, the repo or /root's contents", async () => {
    const r = await run(
      A,
      `ls ${e.dataDir} 2>&1; echo "rc=$?"; ls ${process.cwd()} 2>&1; echo "rc=$?"; cat /root/.npmrc 2>&1; echo "rc=$?"`,
    );
    expect(r.stdout).not.toMatch(/rc=0/);
    expect(r.stdout).toContain("No such file or directory");
    expect(r.stdout).not.toContain("bootstrap");
    const root = await run(A, "ls -a /root");
    const entries = root.stdout.split("\n").filter((x) => x && x !== "." && x !== "..");
    expect(
      entries.every((x) => x === ".pyenv"),
      root.stdout,
    ).toBe(true);
    const shadow = await run(A, "cat /etc/shadow 2>&1; echo rc=$?");
    expect(shadow.stdout).toMatch(/No such file or directory[\s\S]*rc=1/);
  });

  it("the host userland and / are read-only; /workspace and /tmp are writable", async () => {
    for (const p of ["/usr/x", "/etc/x", "/x"]) {
      const r = await run(A, `touch ${p} 2>&1; echo rc=$?`);
      expect(r.stdout, p).toContain("Read-only file system");
      expect(r.stdout, p).toContain("rc=1");
    }
    expect(fs.existsSync("/usr/x")).toBe(false);
    const w = await run(A, "touch /workspace/ok /tmp/ok && echo ok");
    expect(w.stdout).toBe("ok\n");
  });
});

describe("identity and processes", () => {
  it("runs as uid 1000 inside, and as the sandbox's own unprivileged uid on the host", async () => {
    const r = await run(A, "id -u; id -g; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status");
    expect(r.stdout).toMatch(/^1000\n1000\n/);
    expect(r.stdout).toMatch(/CapEff:\s+0000000000000000/);
    expect(r.stdout).toMatch(/NoNewPrivs:\s+1/);
    const pids = procsOf(A);
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) {
      const u = statusUids(pid);
      if (!u) continue;
      expect(
        u.every((x) => x === u[0] && x >= 1000 && x !== 0),
        `pid ${pid} (${comm(pid)}) uids ${u.join(" ")}`,
      ).toBe(true);
      const caps = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(/CapEff:\s+(\w+)/)?.[1];
      expect(caps, `pid ${pid}`).toBe("0000000000000000");
    }
  });

  it("cannot create nested user namespaces", async () => {
    const r = await run(A, "unshare -U true 2>&1; echo rc=$?; unshare -r id 2>&1; echo rc=$?");
    expect(r.stdout).not.toMatch(/rc=0/);
  });

  it("A cannot signal processes outside its pid namespace; B keeps working", async () => {
    const bg = await run(B, "setsid sleep 300 >/dev/null 2>&1 < /dev/null & echo started");
    expect(bg.stdout).toContain("started");
    let bPid = 0;
    await until(
      "B's sleep 300 to appear among its processes",
      () =>
        (bPid = procsOf(B).find((p) => fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes("sleep\u0000300")) ?? 0) >
        0,
      { timeout: 3000 },
    );
    const r = await run(
      A,
      `kill -0 ${bPid} 2>&1; echo rc=$?; kill -9 ${bPid} 2>&1; echo rc=$?; kill -9 1 2>&1; echo rc=$?`,
    );
    const rcs = [...r.stdout.matchAll(/rc=(\d+)/g)].map((m) => m[1]);
    expect(rcs.slice(0, 2), r.stdout).toEqual(["1", "1"]);
    expect(r.stdout).toContain("No such process");
    // `kill -9 1` targets A's own pid-namespace init, which the kernel protects from its namespace.
    expect((await run(A, "echo a-alive")).stdout).toBe("a-alive\n");
    expect(fs.existsSync(`/proc/${bPid}`)).toBe(true);
    expect(comm(bPid)).toBe("sleep");
    expect((await run(B, "cat /workspace/secret.txt")).stdout).toBe(SECRET);
    // The engine still answers.
    expect((await e.api("GET", "/sandboxes/limits")).status).toBe(200);
    expect(e.proc!.exitCode).toBeNull();
  });

  it("kill -9 -1 inside a sandbox reaches only that sandbox's processes", async () => {
    const c = await sandbox();
    const bBefore = procsOf(B);
    const aBefore = procsOf(A);
    await run(c, "kill -9 -1; echo rc=$?").catch(() => undefined);
    for (const pid of [...aBefore, ...bBefore]) expect(fs.existsSync(`/proc/${pid}`), `pid ${pid}`).toBe(true);
    expect((await run(A, "echo a-alive")).stdout).toBe("a-alive\n");
    expect((await run(B, "echo b-alive")).stdout).toBe("b-alive\n");
    // c's init is pid 1 of its namespace, which the kernel shields from it: c itself survives too.
    expect((await e.api("GET", `/sandboxes/${c}`)).body.status).toBe("running");
    expect((await run(c, "echo c-alive")).stdout).toBe("c-alive\n");
  });

  it("sees only its own processes", async () => {
    const r = await run(A, "ps -e -o pid=,comm=");
    const lines = r.stdout.trim().split("\n");
    expect(lines.length).toBeLessThan(10);
    // pid 1 is the sandbox's own init (a reaping sh loop); nothing of the host or engine.
    expect(lines[0]).toMatch(/^\s*1 sh$/);
    expect(r.stdout).not.toMatch(/node|socat|slirp4netns|nsenter|systemd|init\b/);
    for (const l of lines) expect(Number(l.trim().split(/\s+/)[0]), l).toBeLessThan(1000);
  });
});

describe("resource limits", () => {
  it("memory_mb 128: a 400 MB allocation is killed, the engine stays up", async () => {
    const m = await sandbox({ memory_mb: 128, cpu: 1 });
    const memDir = cgroupDir("memory", m);
    expect(memDir).not.toBeNull();
    expect(Number(fs.readFileSync(path.join(memDir!, "memory.limit_in_bytes"), "utf8"))).toBe(128 * 1024 * 1024);
    const script = [
      "chunks = []",
      "for i in range(40):",
      "    chunks.append(b'\\x01' * (10 * 1024 * 1024))",
      "    print(f'allocated {(i + 1) * 10} MB', flush=True)",
    ].join("\n");
    // The script travels in the environment: no shell quoting.
    const res = await exec(e, m, 'python3 -c "$PY"', { timeout_seconds: 60, env: { PY: script } });
    const killed = res.exit_code === 137 || /MemoryError/.test(res.stderr);
    expect(killed, `exit ${res.exit_code}: ${res.stdout.slice(-200)} ${res.stderr.slice(-300)}`).toBe(true);
    expect(res.stdout).not.toContain("allocated 400 MB");
    const oom = fs.readFileSync(path.join(memDir!, "memory.oom_control"), "utf8");
    if (res.exit_code === 137) expect(oom).toMatch(/oom_kill [1-9]/);
    expect((await e.api("GET", "/sandboxes/limits")).status).toBe(200);
    expect((await run(A, "echo alive")).stdout).toBe("alive\n");
  });

  it("a fork bomb hits the pids cap; other sandboxes still run; terminate cleans it up", async () => {
    const f = await sandbox({ memory_mb: 512, cpu: 1 });
    const pidsDir = cgroupDir("pids", f)!;
    expect(pidsDir).not.toBeNull();
    const max = Number(fs.readFileSync(path.join(pidsDir, "pids.max"), "utf8"));
    expect(max).toBeGreaterThan(0);
    // Bounded: at most 4000 forks, each child execs `sleep 120` (alive until the test ends them
    // below, however slowly this machine forks), and the loop stops at the first refusal.
    const loop = [
      "import os",
      "n = 0",
      "for i in range(4000):",
      "    try:",
      "        pid = os.fork()",
      "    except OSError as err:",
      "        print('fork refused:', err.strerror, flush=True)",
      "        break",
      "    if pid == 0:",
      "        try:",
      "            os.execv('/bin/sleep', ['sleep', '120'])",
      "        finally:",
      "            os._exit(0)",
      "    n += 1",
      "print('forked', n, flush=True)",
    ].join("\n");
    const r = await exec(e, f, 'python3 -c "$PY"', { timeout_seconds: 30, env: { PY: loop } });
    expect(r.stdout, JSON.stringify(r)).toContain("fork refused");
    const forked = Number(r.stdout.match(/forked (\d+)/)?.[1]);
    expect(forked).toBeLessThan(max);
    expect(forked).toBeGreaterThan(max / 2);
    const current = Number(fs.readFileSync(path.join(pidsDir, "pids.current"), "utf8"));
    expect(current).toBeLessThanOrEqual(max);
    expect(current).toBeGreaterThan(max / 2);
    expect(fs.readFileSync(path.join(pidsDir, "pids.events"), "utf8")).toMatch(/max [1-9]/);

    const pidsNow = () => Number(fs.readFileSync(path.join(pidsDir, "pids.current"), "utf8"));
    const refusals = () =>
      Number(fs.readFileSync(path.join(pidsDir, "pids.events"), "utf8").match(/max (\d+)/)?.[1] ?? 0);
    await run(f, "pkill -KILL -x sleep || true");
    await until("the forked sleeps to exit", () => pidsNow() < 10, { timeout: 10_000 });

    // Then a classic shell fork bomb, terminated while it runs. Bounded by itself too: the bomb's
    // processes stay in timeout(1)'s process group (bash keeps timeout waiting with `sleep`), which
    // timeout SIGKILLs after 15 s (forks are slow on a loaded 2-core VM: it may take seconds to
    // reach the cap; the sandbox is terminated as soon as it has).
    const before = refusals();
    const bomb = exec(e, f, "timeout -s KILL 15 bash -c ':(){ :|:& }; :; sleep 20'; echo bomb-done", {
      timeout_seconds: 20,
    }).catch((err: Error) => ({ stdout: err.message, exit_code: -1 }));
    await until("a refused fork to be counted", () => refusals() > before, { timeout: 14_000 });
    expect(pidsNow()).toBeLessThanOrEqual(max);
    const other = await run(A, "echo still-fine");
    expect(other.stdout).toBe("still-fine\n");

    const t0 = Date.now();
    const del = await e.api("DELETE", `/sandboxes/${f}`);
    expect(del.status).toBe(204);
    expect(Date.now() - t0).toBeLessThan(10_000);
    await until(
      "the sandbox's pids, memory and freezer cgroups to be removed",
      () => cgroupDir("pids", f) === null && cgroupDir("memory", f) === null && cgroupDir("freezer", f) === null,
      { timeout: 5000 },
    );
    await bomb;
    expect(fs.existsSync(enginePath(e, path.join(e.dataDir!, "engine", "sbx", f)))).toBe(false);
    expect((await run(B, "echo b-alive")).stdout).toBe("b-alive\n");
  });

  it("cpu 0.5: two busy workers get about half a core", async () => {
    const c = await sandbox({ cpu: 0.5, memory_mb: 256 });
    const acct = cgroupDir("cpuacct", c);
    expect(acct).not.toBeNull();
    const cpuDir = cgroupDir("cpu", c)!;
    expect(fs.readFileSync(path.join(cpuDir, "cpu.cfs_quota_us"), "utf8").trim()).toBe("50000");
    const usage = () => Number(fs.readFileSync(path.join(acct!, "cpuacct.usage"), "utf8"));
    const busy = exec(e, c, "timeout 4 sh -c 'yes >/dev/null & yes >/dev/null & wait'; echo done", {
      timeout_seconds: 15,
    });
    await new Promise((r) => setTimeout(r, 1000));
    const u0 = usage();
    const t0 = process.hrtime.bigint();
    await new Promise((r) => setTimeout(r, 2000));
    const u1 = usage();
    const wallNs = Number(process.hrtime.bigint() - t0);
    const cores = (u1 - u0) / wallNs;
    expect((await busy).stdout).toContain("done");
    expect(cores).toBeLessThanOrEqual(0.6);
    expect(cores).toBeGreaterThan(0.2);
  });
});
