// `npm test`: the whole suite, phase by phase (lint, typecheck, vitest, Playwright), stopping at the
// first that fails, then each phase's wall time, so a slow phase shows up in every CI log.
import { spawnSync } from "node:child_process";

const PHASES = [
  ["lint", "npm run -s lint"],
  ["typecheck", "npm run -s typecheck"],
  ["vitest", "npx vitest run"],
  ["playwright", "npx playwright test --grep-invert @sdk-contract"],
  // The engine's contract suites through Baton's /api with a Baton token (e2e/sdk-contract.spec.ts):
  // its own phase, so its time shows on its own line.
  ["sdk-contract", "npx playwright test e2e/sdk-contract.spec.ts --project=sqlite"],
];

const times = [];
let failed = null;
for (const [name, command] of PHASES) {
  const started = Date.now();
  console.log(`\n[test] ${name}: ${command}`);
  const r = spawnSync(command, { shell: true, stdio: "inherit" });
  times.push([name, (Date.now() - started) / 1000]);
  if (r.status !== 0) {
    failed = `${name} failed (${r.signal ?? `exit ${r.status}`})`;
    break;
  }
}
console.log("\n[test] phase times:");
for (const [name, s] of times) console.log(`[test]   ${name.padEnd(11)} ${s.toFixed(0).padStart(5)} s`);
if (failed) {
  console.log(`[test] ${failed}`);
  process.exit(1);
}
