import { defineConfig } from "vitest/config";

// Two projects: the console's tests (lib/, tests/) first, then the engine package's (engine/vitest.config.ts),
// whose files boot real engines two at a time.
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
          sequence: { groupOrder: 0 },
        },
      },
      "./engine/vitest.config.ts",
    ],
  },
});
