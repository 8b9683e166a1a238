import { defineConfig } from "vitest/config";

// Each engine test file boots its own real engine process (real namespaces, cgroups, HTTP), so files
// run two at a time on this 2-core machine and get generous timeouts.
export default defineConfig({
  test: {
    reporters: ["default", "./scripts/vitest-summary-reporter.ts"],
    projects: [
      {
        test: {
          name: "lib",
          include: ["lib/**/*.test.ts", "tests/**/*.test.ts"],
          // server-only throws outside a React Server Components bundle; tests run on the server side.
          alias: { "server-only": new URL("./tests/helpers/server-only-stub.ts", import.meta.url).pathname },
          testTimeout: 30_000,
          // Unit and DB tests first, then the engine files (which boot real engines, two at a time).
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: "engine",
          include: ["engine/test/**/*.test.ts"],
          pool: "forks",
          maxWorkers: 2,
          testTimeout: 60_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
