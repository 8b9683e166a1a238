// The "many browsers" bench: simulated browsers against one Baton (the production console server
// on a built `.next`, and a fresh engine), once with the console's database on SQLite and once on
// PostgreSQL, against issue 13's budget: 200 browsers, p99 < 250 ms and no errors. Needs
// `npx next build` first. Never asserts: budgets are read, not timed tests.
//
// Every browser has the sandbox list open (refreshed every 5 s) and one sandbox's page (the sandbox
// every 5 s, metrics every second, the events backlog and then its SSE stream); the exact mix is in
// scripts/bench/load-driver.ts, which runs in its own process and reports its own CPU. Browsers
// share BENCH_SESSIONS sign-ins and BENCH_SANDBOXES sandboxes (a 2-core machine cannot hold 200).
//
//   DATABASE_URL=postgres://… npx tsx scripts/bench-load.ts      (PostgreSQL is skipped without it)
//   BENCH_LEVELS=1,50,200 BENCH_MEASURE_S=30 BENCH_WARMUP_S=10 BENCH_LIST_ROWS=0 BENCH_DB=sqlite,postgres
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { pct, table, type Row } from "../engine/bench/lib";
import { createSandbox } from "../engine/test/helpers/engine";
import { startConsoleBench, type ConsoleBench } from "./bench/console-harness";
import type { DriverJob, DriverResult } from "./bench/load-driver";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const LEVELS = (process.env.BENCH_LEVELS ?? "1,50,200").split(",").map(Number);
const MEASURE_MS = Number(process.env.BENCH_MEASURE_S ?? 30) * 1000;
const WARMUP_MS = Number(process.env.BENCH_WARMUP_S ?? 10) * 1000;
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 20);
const SANDBOXES = Number(process.env.BENCH_SANDBOXES ?? 20);
const LIST_ROWS = Number(process.env.BENCH_LIST_ROWS ?? 0);
const DATABASES = (process.env.BENCH_DB ?? "sqlite,postgres").split(",");
/**
 * How the simulated sandbox pages stay current: "live" as the page does (one pushed stream), "poll"
 * as it did before the stream (each part polled), or "poll,live": both at each level, one after the
 * other against the same servers, for a side-by-side reading on a noisy machine.
 */
const TABS = (process.env.BENCH_TAB ?? "live").split(",") as ("live" | "poll")[];
const P99_BUDGET_MS = 250;
const BUDGET_SOURCE = "issue 13: 200 browsers, p99 < 250 ms, 0 errors";
const PASSWORD = "correct horse battery staple";

const log = (s: string) => process.stderr.write(`[bench:load] ${s}\n`);

/** utime + stime of a process, in ms. */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

function runDriver(job: DriverJob, onMeasuring: () => void): Promise<DriverResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(ROOT, "scripts/bench/load-driver.ts"), JSON.stringify(job)],
      { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      const before = out;
      out += d.toString();
      if (!before.includes("measuring\n") && out.includes("measuring\n")) onMeasuring();
    });
    child.on("exit", (code) => {
      const line = out.trim().split("\n").at(-1);
      if (code === 0 && line) resolve(JSON.parse(line) as DriverResult);
      else reject(new Error(`load driver exited ${code}: ${out}`));
    });
  });
}

interface LevelResult {
  browsers: number;
  tab: "live" | "poll";
  result: DriverResult;
  consoleCpu: number;
  engineCpu: number;
  consoleRss: number;
  engineRss: number;
}

async function level(
  bench: ConsoleBench,
  cookies: string[],
  ids: string[],
  browsers: number,
  tab: "live" | "poll",
): Promise<LevelResult> {
  const consolePid = bench.server.pid!;
  const enginePid = bench.engine.enginePid!;
  let measuring!: () => void;
  const measured = new Promise<void>((r) => (measuring = r));
  const driver = runDriver(
    {
      origin: bench.origin,
      cookies,
      sandboxIds: ids,
      browsers,
      warmupMs: WARMUP_MS,
      measureMs: MEASURE_MS,
      listRows: LIST_ROWS,
      tab,
    },
    () => measuring(),
  );
  await Promise.race([measured, driver]);
  const c0 = cpuMs(consolePid);
  const e0 = cpuMs(enginePid);
  const t0 = performance.now();
  let consoleRss = 0;
  let engineRss = 0;
  const sampler = setInterval(() => {
    consoleRss = Math.max(consoleRss, rssMiB(consolePid));
    engineRss = Math.max(engineRss, rssMiB(enginePid));
  }, 1_000);
  await new Promise((r) => setTimeout(r, MEASURE_MS));
  const elapsed = performance.now() - t0;
  const consoleCpu = ((cpuMs(consolePid) - c0) / elapsed) * 100;
  const engineCpu = ((cpuMs(enginePid) - e0) / elapsed) * 100;
  clearInterval(sampler);
  const result = await driver;
  return { browsers, tab, result, consoleCpu, engineCpu, consoleRss, engineRss };
}

/** The console's owner signs in `n` times: one session per sign-in, as n browsers would hold. */
async function signIn(bench: ConsoleBench, n: number): Promise<string[]> {
  const cookies: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await fetch(`${bench.origin}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: bench.origin },
      body: JSON.stringify({ email: "bench@example.com", password: PASSWORD }),
    });
    if (!r.ok) throw new Error(`sign-in ${i} failed: ${r.status} ${await r.text()}`);
    cookies.push(
      r.headers
        .getSetCookie()
        .map((c) => c.split(";")[0])
        .join("; "),
    );
  }
  return cookies;
}

/** A fresh database on the server of `url` for one run; dropped by the returned function. */
async function freshPostgres(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `baton_bench_load_${process.pid}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`drop database if exists ${name}`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(url);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

async function runDatabase(db: "sqlite" | "postgres"): Promise<LevelResult[]> {
  const pgDb = db === "postgres" ? await freshPostgres(process.env.DATABASE_URL!) : null;
  // Enterprise: the plan whose RAM budget holds the most small sandboxes at once.
  const bench = await startConsoleBench(`load-${db}`, {
    databaseUrl: pgDb?.url,
    engineEnv: { ORKESTR_ENGINE_PLAN: "enterprise", ORKESTR_ENGINE_CHECK_RESPONSES: "0" },
  });
  try {
    log(`${db}: console ${bench.origin}, creating ${SANDBOXES} sandboxes, ${SESSIONS} sessions`);
    const ids: string[] = [];
    for (let i = 0; i < SANDBOXES; i++) ids.push(await createSandbox(bench.engine, { timeout_seconds: 3600 }));
    const cookies = await signIn(bench, SESSIONS);
    const results: LevelResult[] = [];
    for (const browsers of LEVELS)
      for (const tab of TABS) {
        log(
          `${db}: ${browsers} browsers, ${tab} pages (${WARMUP_MS / 1000} s warm-up, ${MEASURE_MS / 1000} s measured)`,
        );
        results.push(await level(bench, cookies, ids, browsers, tab));
      }
    return results;
  } finally {
    await bench.stop();
    await pgDb?.drop();
  }
}

function rows(db: string, results: LevelResult[]): { rows: Row[]; notes: string[] } {
  const out: Row[] = [];
  const notes: string[] = [];
  for (const r of results) {
    const all = Object.values(r.result.kinds).flatMap((k) => k.ms);
    const requests = Object.entries(r.result.kinds)
      .filter(([kind]) => kind !== "stream open")
      .reduce((n, [, k]) => n + k.count, 0);
    const errors = Object.values(r.result.errors).reduce((a, b) => a + b, 0);
    const budget = r.browsers === 200 && r.tab === "live";
    const at = `${db}, ${r.browsers} browser${r.browsers === 1 ? "" : "s"}${TABS.length > 1 || r.tab === "poll" ? `, ${r.tab}` : ""}`;
    out.push(
      {
        metric: `${at}: requests`,
        ours: requests / (r.result.measuredMs / 1000),
        unit: "req/s",
        ref: null,
        source: "",
      },
      { metric: `${at}: p50`, ours: pct(all, 50), unit: "ms", ref: null, source: "" },
      { metric: `${at}: p95`, ours: pct(all, 95), unit: "ms", ref: null, source: "" },
      {
        metric: `${at}: p99`,
        ours: pct(all, 99),
        unit: "ms",
        ref: budget ? P99_BUDGET_MS : null,
        source: budget ? BUDGET_SOURCE : "",
      },
      { metric: `${at}: errors`, ours: errors, unit: "", ref: budget ? 0 : null, source: budget ? BUDGET_SOURCE : "" },
      { metric: `${at}: console CPU`, ours: r.consoleCpu, unit: "% of a core", ref: null, source: "" },
      {
        metric: `${at}: console CPU per browser`,
        ours: (r.consoleCpu * 10) / r.browsers,
        unit: "ms/s",
        ref: null,
        source: "",
      },
      { metric: `${at}: console RSS (peak)`, ours: r.consoleRss, unit: "MiB", ref: null, source: "" },
      { metric: `${at}: engine CPU`, ours: r.engineCpu, unit: "% of a core", ref: null, source: "" },
      { metric: `${at}: engine RSS (peak)`, ours: r.engineRss, unit: "MiB", ref: null, source: "" },
      { metric: `${at}: load generator CPU`, ours: r.result.cpuPercent, unit: "% of a core", ref: null, source: "" },
    );
    const byKind = Object.entries(r.result.kinds)
      .map(([k, v]) => `${k} ${v.count} (p50 ${pct(v.ms, 50).toFixed(1)}, p99 ${pct(v.ms, 99).toFixed(1)} ms)`)
      .join("; ");
    notes.push(`${at}: ${byKind}.`);
    const s = r.result.streams;
    notes.push(
      `${at}: streams opened ${s.opened}, open at the end ${s.openAtEnd}, dropped while measured ${s.dropped}; frames received ${s.frames} (${s.pushes} named: sandbox, metrics).`,
    );
    if (errors) notes.push(`${at}: errors by kind: ${JSON.stringify(r.result.errors)}.`);
  }
  return { rows: out, notes };
}

const allRows: Row[] = [];
const allNotes: string[] = [
  `Browsers share ${SANDBOXES} sandboxes (engine plan enterprise) and ${SESSIONS} sign-ins of one owner: this 2-core machine cannot run 200 sandboxes.` +
    ` Each browser: the list every 5 s${LIST_ROWS ? ` with ${LIST_ROWS} rows' telemetry` : ""}, a sandbox page` +
    " (live: metrics and the events backlog once, then its live stream pushing the sandbox, metrics every 1 s and the timeline;" +
    " poll, the page before the stream: the sandbox every 5 s, metrics every 1 s, events backlog then the events SSE)," +
    ` connection status every 30 s.` +
    ` ${WARMUP_MS / 1000} s warm-up (browsers arrive over its first half), ${MEASURE_MS / 1000} s measured; latencies are whole responses, the stream's open time included, the stream itself not.` +
    ` CPU is the console's and engine's main process (100% = one core); the machine has ${(await import("node:os")).cpus().length} cores.` +
    ` All browsers are one user, so the live pages watching one sandbox share one upstream reader (${SANDBOXES} readers);` +
    " as many different users would each have their own (a reader is a metrics read a second and a sandbox read every 5 s, made by the console).",
];
for (const db of DATABASES) {
  if (db === "postgres" && !process.env.DATABASE_URL) {
    allNotes.push(
      "PostgreSQL skipped: set DATABASE_URL=postgres://… (a database is created and dropped on that server).",
    );
    continue;
  }
  if (db !== "sqlite" && db !== "postgres") throw new Error(`BENCH_DB: unknown database ${db}`);
  const { rows: r, notes } = rows(db, await runDatabase(db));
  allRows.push(...r);
  allNotes.push(...notes);
}
console.log(table(allRows));
console.log();
for (const n of allNotes) console.log(`- ${n}`);
