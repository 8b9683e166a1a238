import { defineConfig } from "vitest/config";

// Each engine test file boots its own real engine process (real namespaces, cgroups, HTTP), so files
// run two at a time on this 2-core machine and get generous timeouts.
export default defineConfig({
  test: {
    reporters: ["default", "./scripts/vitest-summary-reporter.ts"],
    projects: [
      {
        test: {
          name: "engine",
          include: ["engine/test/**/*.test.ts"],
          pool: "forks",
          maxWorkers: 2,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
