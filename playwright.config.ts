import { defineConfig, devices } from "@playwright/test";
import { CHROMIUM_LAUNCH } from "./e2e/chromium";
import type { ConsoleDatabaseKind } from "./e2e/database";

if (!process.env.TEST_DATABASE_URL)
  console.warn(
    "[e2e] TEST_DATABASE_URL is not set: running the SQLite project only (bash scripts/postgres.sh starts a Postgres)",
  );

/**
 * End-to-end tests in Debian's Chromium (never a downloaded browser) against a real production Next
 * server and a real engine, both started by e2e/fixtures.ts, which also provides `baseURL`.
 */
export default defineConfig<{ database: ConsoleDatabaseKind }>({
  testDir: "e2e",
  outputDir: "test-results",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  // The first test of a run may wait for `next build` (a few minutes on 2 cores); that happens in a
  // worker fixture with its own timeout, so the per-test timeout stays short.
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [["list"]],
  use: {
    ...devices["Desktop Chrome"],
    screenshot: "only-on-failure",
    // Off: recording a trace (a screencast plus a DOM snapshot per action) for every test costs
    // this 2-core machine more than a third of the suite's time, and CI keeps only the log. To
    // debug a failure: `npx playwright test <spec> --trace retain-on-failure`.
    trace: "off",
    launchOptions: CHROMIUM_LAUNCH,
  },
  // The whole suite runs on SQLite; on PostgreSQL, the tests tagged @db (in their titles): those
  // whose subject is what the console keeps in its database (accounts, sessions, sign-in limits,
  // connections, teams), where the two dialects can differ. Every other spec reads the database
  // only through the sign-in fixture, which the @db tests cover on both. E2E_POSTGRES_ALL=1 runs
  // everything on both. Postgres needs TEST_DATABASE_URL (`bash scripts/postgres.sh` prints one;
  // .ci/run sets it); without it the run says so and covers SQLite only.
  projects: [
    { name: "sqlite", use: { database: "sqlite" } },
    ...(process.env.TEST_DATABASE_URL
      ? [
          {
            name: "postgres",
            use: { database: "postgres" as const },
            grep: process.env.E2E_POSTGRES_ALL ? undefined : /@db\b/,
          },
        ]
      : []),
  ],
});
