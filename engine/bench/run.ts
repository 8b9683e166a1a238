import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import { startEngine, type EngineHandle } from "../test/helpers/engine.js";
import {
  children,
  cpuSeconds,
  descendants,
  listeningPid,
  pct,
  procStatus,
  sleep,
  streamExec,
  table,
  type Bench,
  type Row,
} from "./lib.js";
import { previewOverhead } from "./previews.js";
import { snapshotFork } from "./storage.js";
import { templateBuild } from "./templates.js";
import { warmCreateToFirstExec } from "./warm-pool.js";

/**
 * `npm run bench`: latency, throughput and density of the local engine against the numbers in
 * /work/shared/engine-notes.md §5 and orkestr's published claims, plus the preview proxy, named
 * snapshot/fork and template build overheads (previews.ts, storage.ts, templates.ts). Prints a
 * markdown table; it never asserts (benchmarks are not tests). Everything is client-measured over
 * HTTP with performance.now() (the preview baseline alone is timed inside the sandbox);
 * percentiles are nearest-rank.
 */

const N_CREATE = 30;
const N_EXEC = 200;
const N_PAUSE = 20;
const K_IDLE = 20;
const STREAM_BYTES = 200_000_000; // `head -c 200000000` = 200e6 bytes (GNU `200M` would be 200 MiB)
const MiB = 1024 * 1024;

const notes: string[] = [];
const log = (s: string) => process.stderr.write(`[bench] ${s}\n`);
const ms = (t0: number) => performance.now() - t0;

/**
 * 1. POST /sandboxes then POST /exec `true`, end to end; terminate afterwards, untimed. Cold: the
 * bench engine runs with no warm pool (warm-pool.ts measures the pooled path on its own engine).
 */
async function createToFirstExec(b: Bench): Promise<Row[]> {
  const total: number[] = [];
  const createOnly: number[] = [];
  for (let i = -3; i < N_CREATE; i++) {
    const t0 = performance.now();
    const id = await b.create();
    const t1 = performance.now();
    await b.exec(id, "true");
    const t2 = performance.now();
    await b.terminate(id);
    if (i < 0) continue; // warm-up
    createOnly.push(t1 - t0);
    total.push(t2 - t0);
  }
  const src = "orkestr claim: ~150 ms cold start";
  const budget = "issue 13 budget: cold ≤ 50 ms";
  return [
    {
      metric: `create→first exec \`true\`, cold (no pool), median (N=${N_CREATE})`,
      ours: pct(total, 50),
      unit: "ms",
      ref: 50,
      source: budget,
    },
    { metric: "create→first exec `true`, cold, p95", ours: pct(total, 95), unit: "ms", ref: 50, source: budget },
    { metric: "create→first exec `true`, cold, median", ours: pct(total, 50), unit: "ms", ref: 150, source: src },
    { metric: "create→first exec `true`, cold, p95", ours: pct(total, 95), unit: "ms", ref: 150, source: src },
    { metric: "create alone (201 running), median", ours: pct(createOnly, 50), unit: "ms", ref: 150, source: src },
    { metric: "create alone, p95", ours: pct(createOnly, 95), unit: "ms", ref: 150, source: src },
  ];
}

/** 2. POST /exec `true` on a warm sandbox. */
async function execRoundTrip(b: Bench): Promise<Row[]> {
  const id = await b.create();
  const times: number[] = [];
  for (let i = -10; i < N_EXEC; i++) {
    const t0 = performance.now();
    await b.exec(id, "true");
    if (i >= 0) times.push(ms(t0));
  }
  await b.terminate(id);
  const src = "engine-notes §5: `nsenter -a` into a running sandbox ~20 ms";
  return [
    {
      metric: `exec \`true\` round trip, warm, p50 (N=${N_EXEC})`,
      ours: pct(times, 50),
      unit: "ms",
      ref: 20,
      source: src,
    },
    {
      metric: "exec `true` round trip, warm, p99",
      ours: pct(times, 99),
      unit: "ms",
      ref: 20,
      source: `${src} (a median)`,
    },
  ];
}

/** 3. exec/stream of 200e6 zero bytes, SSE and NDJSON; reference: the same bytes through a bare host pipe into Node. */
async function streamThroughput(b: Bench): Promise<Row[]> {
  const id = await b.create();
  const cmd = `head -c ${STREAM_BYTES} /dev/zero`;
  const rows: Row[] = [];
  const ceiling = await hostPipe(cmd);
  const engine = enginePid(b.e);
  for (const format of ["sse", "ndjson"] as const) {
    const client0 = process.cpuUsage();
    const engine0 = cpuSeconds(engine);
    const rss0 = procStatus(engine).rssBytes;
    let peak = rss0;
    const poll = setInterval(() => (peak = Math.max(peak, procStatus(engine).rssBytes)), 50);
    const r = await streamExec(b.e.origin, b.e.token, id, cmd, format).finally(() => clearInterval(poll));
    const client = process.cpuUsage(client0);
    if (r.final.exit_code !== 0 || r.payloadBytes !== STREAM_BYTES) {
      throw new Error(
        `${format}: exit ${r.final.exit_code ?? r.final.error}, ${r.payloadBytes} payload bytes (want ${STREAM_BYTES})`,
      );
    }
    rows.push({
      metric: `exec/stream ${format.toUpperCase()} \`${cmd}\`: ${r.payloadBytes} bytes verified, ${(r.ms / 1000).toFixed(1)} s`,
      ours: r.payloadBytes / 1e6 / (r.ms / 1000),
      unit: "MB/s",
      ref: ceiling,
      source: "same command on the host piped into Node, no sandbox/HTTP (a ceiling)",
    });
    notes.push(
      `${format.toUpperCase()}: ${(r.wireBytes / 1e6).toFixed(0)} MB of HTTP body for ${r.payloadBytes / 1e6} MB of payload (${(r.wireBytes / r.payloadBytes).toFixed(2)}×; JSON writes each NUL as \\u0000); ` +
        `CPU: engine ${(cpuSeconds(engine) - engine0).toFixed(1)} s, bench client ${((client.user + client.system) / 1e6).toFixed(1)} s; engine RSS ${(rss0 / MiB).toFixed(0)} MiB before, peak ${(peak / MiB).toFixed(0)} MiB during (sampled every 50 ms).`,
    );
  }
  await b.terminate(id);
  return rows;
}

/** The engine proper: the process under the helper's child that listens on the engine's port. */
function enginePid(e: EngineHandle): number {
  const port = Number(new URL(e.origin).port);
  const pid = listeningPid(e.proc!.pid!, port);
  if (!pid) throw new Error(`no process under pid ${e.proc!.pid} listens on port ${port}`);
  return pid;
}

/** MB/s of `command` run on the host, stdout counted by Node. */
function hostPipe(command: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn("/bin/sh", ["-c", command], { stdio: ["ignore", "pipe", "ignore"] });
    let n = 0;
    child.stdout.on("data", (c: Buffer) => (n += c.length));
    child.on("error", reject);
    child.on("close", () => resolve(n / 1e6 / (ms(t0) / 1000)));
  });
}

/**
 * 4. pause and resume a sandbox that runs a busy-ish background loop. A failed pause is counted,
 * not fatal: the half-frozen sandbox is terminated and the cycles go on with a fresh one.
 */
async function pauseResume(b: Bench): Promise<Row[]> {
  const busy = async () => {
    const id = await b.create();
    await b.exec(id, "nohup sh -c 'while :; do sleep 0.01; done' >/dev/null 2>&1 &");
    await sleep(200);
    return id;
  };
  let id = await busy();
  const pause: number[] = [];
  const resume: number[] = [];
  const failures: string[] = [];
  for (let i = -2; pause.length < N_PAUSE && failures.length < 5; i++) {
    let t0 = performance.now();
    const p = await b.e.api("POST", `/sandboxes/${id}/pause`);
    const tp = ms(t0);
    if (p.status !== 200 || p.body.status !== "paused") {
      failures.push(`pause ${p.status} after ${tp.toFixed(0)} ms: ${p.body?.detail ?? p.text}`);
      await b.terminate(id);
      id = await busy();
      continue;
    }
    t0 = performance.now();
    const r = await b.e.api("POST", `/sandboxes/${id}/resume`, {});
    const tr = ms(t0);
    if (r.status !== 200 || r.body.status !== "running") throw new Error(`resume: ${r.status} ${r.text}`);
    if (i >= 0) {
      pause.push(tp);
      resume.push(tr);
    }
    await sleep(30);
  }
  await b.terminate(id);
  if (failures.length)
    notes.push(`Pause failed ${failures.length}× (${pause.length} good cycles): ${failures.join("; ")}.`);
  if (!pause.length) throw new Error(`no pause succeeded: ${failures.join("; ")}`);
  return [
    {
      metric: `pause, median (N=${pause.length}, busy loop inside)`,
      ours: pct(pause, 50),
      unit: "ms",
      ref: 16,
      source: "engine-notes §3: freezer FROZEN in 16 ms",
    },
    { metric: "pause, p95", ours: pct(pause, 95), unit: "ms", ref: 16, source: "(same, a single reading)" },
    {
      metric: "resume, median",
      ours: pct(resume, 50),
      unit: "ms",
      ref: 14,
      source: "engine-notes §3: THAWED in 14 ms",
    },
    { metric: "resume, p95", ours: pct(resume, 95), unit: "ms", ref: 14, source: "(same, a single reading)" },
  ];
}

/**
 * 5. Idle density: K sandboxes (network off, memory_mb 256). Per sandbox = its cgroup working set
 * (metrics memory.usage_bytes) + RSS of the host-side bwrap process that is not in that cgroup.
 */
async function idleDensity(b: Bench): Promise<Row[]> {
  const ids: string[] = [];
  for (let i = 0; i < K_IDLE; i++) ids.push(await b.create({ memory_mb: 256, network: "off" }));
  await sleep(2500); // the engine samples cgroups every 1 s; let every sandbox get a fresh idle sample
  let workingSet = 0;
  for (const id of ids) {
    const m = await b.e.api("GET", `/sandboxes/${id}/metrics`);
    if (m.status !== 200 || typeof m.body.memory?.usage_bytes !== "number")
      throw new Error(`metrics: ${m.status} ${m.text}`);
    workingSet += m.body.memory.usage_bytes as number;
  }
  const engine = enginePid(b.e);
  const bwraps = children(engine).filter((pid) => procStatus(pid).name === "bwrap");
  const hostRss = bwraps.reduce((s, pid) => s + procStatus(pid).rssBytes, 0);
  const inside = bwraps.flatMap((pid) => descendants(pid)).map(procStatus);
  const insideRss = inside.reduce((s, p) => s + p.rssBytes, 0);
  for (const id of ids) await b.terminate(id);

  const perWs = workingSet / K_IDLE / MiB;
  const perHost = hostRss / K_IDLE / MiB;
  const per = perWs + perHost;
  const tree = [...new Set(inside.map((p) => p.name))].join(", ");
  notes.push(
    `Density method: the test helper spawns \`node server.ts\` (pid ${b.e.proc!.pid}), which as root re-execs itself via \`unshare --mount\`; ` +
      `the engine proper is the descendant owning the listening socket on :${new URL(b.e.origin).port} (inode from /proc/net/tcp matched against /proc/<pid>/fd), pid ${engine}. ` +
      `Its bwrap children (${bwraps.length} found for ${K_IDLE} sandboxes) are the host-side halves, outside the sandbox cgroups: their VmRSS is added. ` +
      `Everything below them (${inside.length} processes: ${tree}) is in the sandbox cgroups and counted by the working set (usage − inactive file); ` +
      `their own VmRSS sum is ${(insideRss / K_IDLE / MiB).toFixed(2)} MiB per sandbox, mostly shared library pages. ` +
      `RSS counts shared pages in full, so the host-side figure is an upper bound.`,
  );
  const none = "no published figure (orkestr `small` reserves 1 GiB)";
  return [
    {
      metric: `idle sandbox: cgroup working set, mean of K=${K_IDLE}`,
      ours: perWs,
      unit: "MiB",
      ref: null,
      source: "GET /metrics memory.usage_bytes",
    },
    {
      metric: "idle sandbox: host-side bwrap RSS, mean",
      ours: perHost,
      unit: "MiB",
      ref: null,
      source: "/proc/<pid>/status VmRSS",
    },
    {
      metric: "idle sandbox: total host memory",
      ours: per,
      unit: "MiB",
      ref: null,
      source: "sum of the two rows above",
    },
    { metric: "idle sandboxes per 1 GiB (1024 ÷ total)", ours: 1024 / per, unit: "", ref: null, source: none },
  ];
}

function header(): string {
  const cpu = os.cpus()[0]?.model ?? "?";
  return [
    `# Baton engine bench — ${new Date().toISOString()}`,
    "",
    `Machine: ${os.availableParallelism()} CPUs (${cpu}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, kernel ${os.release()}, Node ${process.version}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  ].join("\n");
}

async function main(): Promise<void> {
  const started = performance.now();
  console.log(header());
  const e = await startEngine();
  const live = new Set<string>();
  const cleanup = async () => {
    await Promise.all([...live].map((id) => e.api("DELETE", `/sandboxes/${id}`).catch(() => undefined)));
    live.clear();
    await e.stop();
    if (e.dataDir) fs.rmSync(e.dataDir, { recursive: true, force: true });
  };
  process.once("SIGINT", () => void cleanup().finally(() => process.exit(130)));
  const b: Bench = {
    e,
    async create(body = {}) {
      const r = await e.api("POST", "/sandboxes", { template: "python-3.12", ...body });
      if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
      live.add(r.body.id);
      return r.body.id as string;
    },
    async terminate(id) {
      const r = await e.api("DELETE", `/sandboxes/${id}`);
      if (r.status !== 204) throw new Error(`terminate: ${r.status} ${r.text}`);
      live.delete(id);
    },
    async exec(id, command, extra = {}) {
      const r = await e.api("POST", `/sandboxes/${id}/exec`, { command, ...extra });
      if (r.status !== 200 || r.body.exit_code !== 0)
        throw new Error(`exec ${command.slice(0, 200)}: ${r.status} ${r.text.slice(0, 2000)}`);
      return r.body.stdout as string;
    },
    note: (text) => notes.push(text),
  };
  try {
    const limits = await e.api("GET", "/limits");
    console.log(
      `Engine: plan ${limits.body.plan}, isolation ${limits.body.isolation?.mode}, template python-3.12, no warm pool (but in its own section), keep-alive HTTP on 127.0.0.1`,
    );
    const rows: Row[] = [];
    for (const [name, fn] of [
      ["create→first exec", createToFirstExec],
      ["create→first exec, warm pool", warmCreateToFirstExec],
      ["exec round trip", execRoundTrip],
      ["stream throughput", streamThroughput],
      ["pause/resume", pauseResume],
      ["idle density", idleDensity],
      ["preview proxy", previewOverhead],
      ["snapshot and fork", snapshotFork],
      ["template build", templateBuild],
    ] as const) {
      const t0 = performance.now();
      try {
        rows.push(...(await fn(b)));
        log(`${name} done in ${(ms(t0) / 1000).toFixed(1)} s`);
      } catch (err) {
        // One broken measurement should not hide the others.
        rows.push({
          metric: `${name}: FAILED (${(err as Error).message.slice(0, 200)})`,
          ours: NaN,
          unit: "",
          ref: null,
          source: "—",
        });
        log(`${name} failed: ${(err as Error).stack}`);
      }
    }
    console.log("\n" + table(rows) + "\n");
    console.log(
      "Ours ÷ ref: below 1× is better for latency and memory, above 1× for throughput. Warm-up runs (3 creates, 10 execs, 2 pause cycles, 30 preview GETs, 1 snapshot+fork, 1 template build) are excluded.",
    );
    for (const n of notes) console.log(`\n- ${n}`);
  } finally {
    await cleanup();
    console.log(`\nTotal bench time ${(ms(started) / 1000).toFixed(1)} s.`);
  }
}

main().catch((err: Error) => {
  console.error(`[bench] failed: ${err.stack ?? err.message}`);
  process.exitCode = 1;
});
