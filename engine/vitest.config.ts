import { defineConfig } from "vitest/config";

// Each engine test file boots its own real engine process (real namespaces, cgroups, HTTP), so files
// run two at a time on a 2-core machine and get generous timeouts. The root vitest.config.ts runs
// this project after the console's (`npm run test:engine` runs it alone).
export default defineConfig({
  test: {
    name: "engine",
    include: ["test/**/*.test.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    sequence: { groupOrder: 1 },
  },
});
