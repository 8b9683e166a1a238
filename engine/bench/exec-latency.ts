import fs from "node:fs";
import { startEngine } from "../test/helpers/engine.js";
import { pct } from "./lib.js";

/**
 * `npx tsx engine/bench/exec-latency.ts [rounds]`: the two numbers every change to how a sandbox
 * starts or how exec enters it must keep (the first two rows of `npm run bench`), without the rest
 * of the suite: create→first exec `true` (N=30) and warm exec `true` round trips (N=200). Several
 * rounds on the same engine show the machine's noise. Prints medians and p95 per round.
 */
const N_CREATE = 30;
const N_EXEC = 200;
const rounds = Number(process.argv[2] ?? 3);

async function main(): Promise<void> {
  const e = await startEngine();
  const ms = (t0: number) => performance.now() - t0;
  const create = async () => {
    const r = await e.api("POST", "/sandboxes", { template: "python-3.12" });
    if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
    return r.body.id as string;
  };
  const exec = async (id: string) => {
    const r = await e.api("POST", `/sandboxes/${id}/exec`, { command: "true" });
    if (r.status !== 200 || r.body.exit_code !== 0) throw new Error(`exec: ${r.status} ${r.text}`);
  };
  try {
    const iso = (await e.api("GET", "/sandboxes/limits")).body.isolation;
    console.log(`isolation ${iso.mode}; seccomp ${JSON.stringify(iso.seccomp ?? "not reported")}`);
    for (let round = 1; round <= rounds; round++) {
      const first: number[] = [];
      for (let i = -3; i < N_CREATE; i++) {
        const t0 = performance.now();
        const id = await create();
        await exec(id);
        if (i >= 0) first.push(ms(t0));
        await e.api("DELETE", `/sandboxes/${id}`);
      }
      const id = await create();
      const rtt: number[] = [];
      for (let i = -10; i < N_EXEC; i++) {
        const t0 = performance.now();
        await exec(id);
        if (i >= 0) rtt.push(ms(t0));
      }
      await e.api("DELETE", `/sandboxes/${id}`);
      const f = (xs: number[], p: number) => pct(xs, p).toFixed(1);
      console.log(`round ${round}: create→first exec p50 ${f(first, 50)} ms, p95 ${f(first, 95)} ms | exec round trip p50 ${f(rtt, 50)} ms, p95 ${f(rtt, 95)} ms`);
    }
  } finally {
    await e.stop();
    if (e.dataDir) fs.rmSync(e.dataDir, { recursive: true, force: true });
  }
}

void main();
