import type { Reporter, TestModule } from "vitest/node";

/**
 * Ends the run with the slowest test files (so a CI log shows where the vitest phase's time goes)
 * and one plain line, "tests: N passed, N failed, N skipped", that any CI can read.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      if (m.state() === "failed" && [...m.children.allTests()].length === 0) failed++;
    }
    const slowest = [...modules]
      .map((m) => [m.moduleId.replace(`${process.cwd()}/`, ""), m.diagnostic().duration] as const)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12);
    console.log("\nslowest test files:");
    for (const [file, ms] of slowest) console.log(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}`);
    console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
