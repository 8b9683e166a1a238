// `npm run bench`: every benchmark in the repo, one after the other, each in its own process so
// none shares the machine with another: the engine (engine/bench/run.ts), then the console's
// parts (the proxy's cost, many browsers at once, page quality, terminal typing, the 10,000-row
// list). Each part prints its own table, its figures beside the number they are measured against
// with the ratio; this runner prints how long each part took and which failed. It never asserts:
// benchmarks are not tests.
//
//   npm run bench                        everything (the console parts build `.next` if missing)
//   npm run bench -- --only engine,proxy some parts, by name
//   npm run bench -- --list              the part names
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Part {
  name: string;
  script: string;
  what: string;
  /** Runs against the production console, so it needs `next build` first. */
  console: boolean;
  /** Runs on PostgreSQL as well as SQLite, given DATABASE_URL. */
  postgres?: boolean;
}

const PARTS: Part[] = [
  { name: "engine", script: "engine/bench/run.ts", what: "the engine's own latencies", console: false },
  { name: "proxy", script: "scripts/bench-proxy.ts", what: "the cost of Baton's /api proxy", console: true },
  { name: "load", script: "scripts/bench-load.ts", what: "200 browsers at once", console: true, postgres: true },
  { name: "pages", script: "scripts/bench-pages.ts", what: "Lighthouse page quality", console: true },
  { name: "terminal", script: "scripts/bench-terminal.ts", what: "typing through the relay", console: true },
  { name: "list", script: "scripts/bench-list.ts", what: "the 10,000-row list", console: true },
  {
    name: "audit",
    script: "scripts/bench-audit.ts",
    what: "the audit log's query over 100,000 rows",
    console: false,
    postgres: true,
  },
  {
    name: "usage",
    script: "scripts/bench-usage.ts",
    what: "the usage reading job's cost per team per run, its spend caps included (1, 10, 100 teams)",
    console: false,
    postgres: true,
  },
  { name: "sso", script: "scripts/bench-sso.ts", what: "an SSO sign-in against a local IdP", console: true },
];

function selected(argv: string[]): Part[] {
  const i = argv.indexOf("--only");
  if (i < 0) return PARTS;
  const names = (argv[i + 1] ?? "").split(",").filter(Boolean);
  const unknown = names.filter((n) => !PARTS.some((p) => p.name === n));
  if (unknown.length || !names.length) {
    console.error(
      `[bench] unknown part(s) ${unknown.join(", ") || "(none given)"}; known: ${PARTS.map((p) => p.name).join(", ")}`,
    );
    process.exit(2);
  }
  return PARTS.filter((p) => names.includes(p.name));
}

function main(): void {
  const argv = process.argv.slice(2);
  if (argv.includes("--list")) {
    for (const p of PARTS) console.log(`${p.name.padEnd(9)} ${p.what} (${p.script})`);
    return;
  }
  const parts = selected(argv).filter((p) => {
    // A part still being written is skipped with a line, not an error.
    const present = fs.existsSync(path.join(ROOT, p.script));
    if (!present) console.error(`[bench] ${p.name}: ${p.script} is not in this checkout; skipped`);
    return present;
  });
  if (parts.some((p) => p.console) && !fs.existsSync(path.join(ROOT, ".next", "BUILD_ID"))) {
    console.error("[bench] the console parts need a production build: running `next build`...");
    const build = spawnSync("npx", ["next", "build"], {
      cwd: ROOT,
      stdio: "inherit",
      env: { NEXT_TELEMETRY_DISABLED: "1", ...process.env },
    });
    if (build.status !== 0) process.exit(build.status ?? 1);
  }
  const env = { ...process.env };
  if (parts.some((p) => p.postgres) && !env.DATABASE_URL && !env.BENCH_NO_POSTGRES) {
    // The load part measures SQLite and PostgreSQL: the throwaway server the tests use (it installs
    // Debian's postgresql where it is missing, as root); BENCH_NO_POSTGRES=1 measures SQLite only.
    console.error("[bench] starting a PostgreSQL for the load part (scripts/postgres.sh)...");
    const pg = spawnSync("bash", ["scripts/postgres.sh"], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    const url = pg.stdout.trim().split("\n").pop();
    if (pg.status === 0 && url?.startsWith("postgres")) env.DATABASE_URL = url;
    else console.error("[bench] no PostgreSQL: the load part measures SQLite only");
  }
  const results: { part: Part; seconds: number; ok: boolean }[] = [];
  for (const part of parts) {
    console.log(`\n## ${part.name}: ${part.what}\n`);
    const t0 = performance.now();
    const run = spawnSync(process.execPath, ["--import", "tsx", part.script], {
      cwd: ROOT,
      stdio: "inherit",
      // Only the parts that measure PostgreSQL get its URL: the others' consoles stay on SQLite.
      env: part.postgres ? env : process.env,
    });
    results.push({ part, seconds: (performance.now() - t0) / 1000, ok: run.status === 0 });
  }
  console.log("\n## Summary\n");
  for (const r of results)
    console.log(
      `- ${r.part.name.padEnd(9)} ${r.seconds.toFixed(1).padStart(6)} s ${r.ok ? "" : " FAILED (see its output above)"}`,
    );
  if (results.some((r) => !r.ok)) process.exitCode = 1;
}

main();
