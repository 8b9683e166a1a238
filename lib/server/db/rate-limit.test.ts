import "server-only";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, migrateToLatest, type Db } from "./index";
import { hitRateLimit, refundRateLimit } from "./rate-limit";
import { testBackends, type TestDatabase } from "./test-backends";

// Baton runs as several stateless instances on one database. The sign-in limits must hold across
// them: each instance here is its own connection (pool) to the same database, as two processes are.

describe.each(testBackends)("sign-in rate limits shared by several instances on $name", (backend) => {
  let t: TestDatabase;
  let instances: Db[];

  beforeAll(async () => {
    t = await backend.open();
    await migrateToLatest(t.db);
    const second =
      backend.name === "sqlite"
        ? createDb({ kind: "sqlite", path: t.location })
        : createDb({ kind: "postgres", url: process.env.TEST_DATABASE_URL!, schema: t.location, max: 5 });
    instances = [t.db, second];
  });
  afterAll(async () => {
    await instances[1]?.destroy();
    await t.close();
  });

  it("allows exactly the limit when concurrent hits arrive at different instances", async () => {
    const key = `signin:ip:203.0.113.${backend.name.length}`;
    const opts = { limit: 10, windowMs: 15 * 60_000, now: Date.now() };
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => hitRateLimit(instances[i % 2]!, key, opts)));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    // One counter, incremented atomically: every hit saw a distinct count.
    expect(results.map((r) => r.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  it("a refund on one instance is seen by the other", async () => {
    const key = "signin:email:shared@example.com";
    const opts = { limit: 2, windowMs: 60_000, now: Date.now() };
    await hitRateLimit(instances[0]!, key, opts);
    await hitRateLimit(instances[1]!, key, opts);
    expect((await hitRateLimit(instances[0]!, key, opts)).allowed).toBe(false);
    await refundRateLimit(instances[1]!, key);
    await refundRateLimit(instances[1]!, key);
    expect(await hitRateLimit(instances[0]!, key, opts)).toMatchObject({ allowed: true, count: 2 });
  });
});
