import fs from "node:fs";
import { startEngine, type EngineHandle } from "../test/helpers/engine.js";
import { pct } from "./lib.js";

/**
 * `npx tsx engine/bench/exec-latency.ts [--against DIR]`: the two numbers every change to how a
 * sandbox starts or how exec enters it must keep (the first two rows of `npm run bench`), without
 * the rest of the suite: create→first exec `true` (N=60) and warm exec `true` round trips
 * (N=1000). With --against, a second engine runs from another checkout (e.g. `git archive` of the
 * previous commit with node_modules linked) and the two are measured alternately, call by call,
 * so the machine's load hits both alike; on a shared 2-core machine that is the only fair A/B.
 * With --pool N, this checkout also runs a second engine with a warm pool of N (measured the same
 * way, each create once its pool is full again, and no engine is timed while a pool refills).
 */
const N_CREATE = 60;
const N_EXEC = 1000;
const againstAt = process.argv.indexOf("--against");
const against = againstAt > 0 ? process.argv[againstAt + 1] : undefined;
const poolAt = process.argv.indexOf("--pool");
const poolSize = poolAt > 0 ? Number(process.argv[poolAt + 1]) : 0;

/** Until every pooled engine's pool is full: a refill must not run beside a timed call of any engine. */
async function poolsFull(engines: [string, EngineHandle][]): Promise<void> {
  for (const [, e] of engines) {
    for (;;) {
      const pool = (await e.api("GET", "/limits")).body.warm_pool as { size: number; ready: number } | undefined;
      if (!pool || pool.ready >= pool.size) break;
      // Slower than the pool's quiet window, so the polling itself does not hold the refill off.
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function create(e: EngineHandle): Promise<string> {
  const r = await e.api("POST", "/sandboxes", { template: "python-3.12" });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  return r.body.id as string;
}

async function exec(e: EngineHandle, id: string): Promise<void> {
  const r = await e.api("POST", `/sandboxes/${id}/exec`, { command: "true" });
  if (r.status !== 200 || r.body.exit_code !== 0) throw new Error(`exec: ${r.status} ${r.text}`);
}

async function main(): Promise<void> {
  const engines: [string, EngineHandle][] = [["this checkout", await startEngine()]];
  if (poolSize > 0)
    engines.push([
      `this checkout, warm pool of ${poolSize}`,
      await startEngine({ env: { ORKESTR_ENGINE_POOL_SIZE: String(poolSize) } }),
    ]);
  if (against) engines.push([against, await startEngine({ checkout: against })]);
  try {
    for (const [name, e] of engines) {
      const iso = (await e.api("GET", "/sandboxes/limits")).body.isolation;
      console.log(`${name}: isolation ${iso.mode}, seccomp ${iso.seccomp?.enforced ? "enforced" : "not enforced"}`);
    }
    const first = new Map<string, number[]>(engines.map(([n]) => [n, []]));
    const rtt = new Map<string, number[]>(engines.map(([n]) => [n, []]));
    for (let i = -3; i < N_CREATE; i++) {
      for (const [name, e] of engines) {
        await poolsFull(engines);
        const t0 = performance.now();
        const id = await create(e);
        await exec(e, id);
        if (i >= 0) first.get(name)!.push(performance.now() - t0);
        await e.api("DELETE", `/sandboxes/${id}`);
      }
    }
    const warm = await Promise.all(engines.map(([, e]) => create(e)));
    for (let i = -20; i < N_EXEC; i++) {
      for (const [k, [name, e]] of engines.entries()) {
        const t0 = performance.now();
        await exec(e, warm[k]!);
        if (i >= 0) rtt.get(name)!.push(performance.now() - t0);
      }
    }
    const f = (xs: number[], p: number) => pct(xs, p).toFixed(1);
    for (const [name] of engines) {
      const a = first.get(name)!;
      const b = rtt.get(name)!;
      console.log(
        `${name}: create→first exec p50 ${f(a, 50)} ms, p95 ${f(a, 95)} ms (N=${N_CREATE}) | exec round trip p50 ${f(b, 50)} ms, p95 ${f(b, 95)} ms (N=${N_EXEC})`,
      );
    }
  } finally {
    for (const [, e] of engines) {
      await e.stop();
      if (e.dataDir) fs.rmSync(e.dataDir, { recursive: true, force: true });
    }
  }
}

void main();
