#!/usr/bin/env node
// Runs the engine's contract suites (engine/test/contract*.test.ts) over HTTP against a v1 server:
//   npm run contract                                   a fresh local engine (what `npm test` does)
//   ORKESTR_API_URL=https://… ORKESTR_API_KEY=ork_… npm run contract
//                                                      any other orkestr v1 server, e.g. the hosted API
// Against a remote server the suites create (and terminate) real sandboxes on that account, which
// may cost money; engine-only checks (admin faults, restarts, local previews) are skipped there.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const url = process.env.ORKESTR_API_URL;
const key = process.env.ORKESTR_API_KEY;
if (url && !key) {
  console.error(
    "check-contract: ORKESTR_API_URL is set but ORKESTR_API_KEY is not; give both, or neither for a local engine.",
  );
  process.exit(2);
}
if (url) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    console.error(`check-contract: ORKESTR_API_URL is not a URL: ${url}`);
    process.exit(2);
  }
  console.log(`check-contract: running the contract suites against ${parsed.origin} (real sandboxes on that account)`);
} else {
  console.log("check-contract: running the contract suites against a fresh local engine");
}

// vitest's package exports do not include its CLI file: find it beside its package.json.
const vitest = path.join(path.dirname(createRequire(import.meta.url).resolve("vitest/package.json")), "vitest.mjs");
const result = spawnSync(
  process.execPath,
  [vitest, "run", "--project", "engine", "engine/test/contract", ...process.argv.slice(2)],
  {
    cwd: root,
    stdio: "inherit",
  },
);
process.exit(result.status ?? 1);
