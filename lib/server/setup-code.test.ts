import "server-only";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { migrateToLatest } from "./db/index";
import { testBackends, type TestDatabase } from "./db/test-backends";
import { resetEnvForTests } from "./env";
import { checkSetupCode, clearSetupCode, ensureSetupCode, setupCodePath } from "./setup-code";

const CODE = /^[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}$/;

describe.each(testBackends)("the setup code with two instances on one database ($name)", (backend) => {
  let t: TestDatabase;
  let a: string;
  let b: string;
  beforeAll(async () => {
    vi.stubEnv("BATON_SECRET", "k".repeat(48));
    resetEnvForTests();
    t = await backend.open();
    await migrateToLatest(t.db);
    a = fs.mkdtempSync(path.join(os.tmpdir(), "baton-setup-a-"));
    b = fs.mkdtempSync(path.join(os.tmpdir(), "baton-setup-b-"));
  });
  afterAll(async () => {
    await t.close();
    for (const dir of [a, b]) fs.rmSync(dir, { recursive: true, force: true });
    vi.unstubAllEnvs();
    resetEnvForTests();
  });

  it("both print the same code (also when they start at once), and each accepts it", async () => {
    const [fromA, fromB] = await Promise.all([ensureSetupCode(t.db, a, () => {}), ensureSetupCode(t.db, b, () => {})]);
    expect(fromA).toMatch(CODE);
    expect(fromB).toBe(fromA);
    // Each data dir holds the copy an admin reads, 0600.
    for (const dir of [a, b]) {
      expect(fs.readFileSync(setupCodePath(dir), "utf8").trim()).toBe(fromA);
      expect(fs.statSync(setupCodePath(dir)).mode & 0o777).toBe(0o600);
    }
    // Read in A's log, typed into a form that B serves.
    expect(await checkSetupCode(t.db, fromA.toLowerCase().replace(/-/g, " "))).toBe(true);
    expect(await checkSetupCode(t.db, "AAAA-BBBB-CCCC")).toBe(false);
    // Stored encrypted, not as typed.
    const row = await t.db.selectFrom("settings").select("value").where("key", "=", "setup.code").executeTakeFirst();
    expect(row?.value).toMatch(/^v1:/);
    expect(row?.value).not.toContain(fromA);
  });

  it("once used, the code is gone for every instance", async () => {
    const code = await ensureSetupCode(t.db, a, () => {});
    await clearSetupCode(t.db, b);
    expect(await checkSetupCode(t.db, code)).toBe(false);
    expect(fs.existsSync(setupCodePath(b))).toBe(false);
  });

  it("a code an older Baton left in the data dir only is kept", async () => {
    await clearSetupCode(t.db, a);
    fs.writeFileSync(setupCodePath(a), "ZZZZ-2222-YYYY\n", { mode: 0o600 });
    expect(await ensureSetupCode(t.db, a, () => {})).toBe("ZZZZ-2222-YYYY");
    expect(await ensureSetupCode(t.db, b, () => {})).toBe("ZZZZ-2222-YYYY");
  });
});
