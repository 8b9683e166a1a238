import "server-only";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { hashPassword, SCRYPT_PARAMS } from "./crypto";
import { listAuditEvents } from "./db/audit";
import { migrateToLatest } from "./db/index";
import { hitRateLimit, refundRateLimit } from "./db/rate-limit";
import { findValidSession, sessionIdFromToken } from "./db/sessions";
import { testBackends, type TestDatabase } from "./db/test-backends";
import { createUser, getUserCredentials, setUserDisabled } from "./db/users";
import { resetEnvForTests } from "./env";
import { SIGN_IN_LIMITS, signInError, signInWithPassword } from "./sign-in";

let dataDir: string;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-signin-"));
  vi.stubEnv("BATON_DATA_DIR", dataDir);
  vi.stubEnv("BATON_SECRET", "s".repeat(48));
  resetEnvForTests();
});
afterAll(() => {
  vi.unstubAllEnvs();
  resetEnvForTests();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

let seq = 0;
const uniq = (p: string) => `${p}-${++seq}-${Math.random().toString(36).slice(2, 7)}`;
const PASSWORD = "correct horse battery staple";

describe.each(testBackends)("signInWithPassword on $name", (backend) => {
  let t: TestDatabase;
  let hash: string;

  beforeAll(async () => {
    t = await backend.open();
    await migrateToLatest(t.db);
    hash = await hashPassword(PASSWORD);
  });
  afterAll(async () => {
    await t.close();
  });

  const user = async (opts: { passwordHash?: string | null } = {}) =>
    createUser(t.db, {
      email: `${uniq("ada")}@Example.com`,
      name: "Ada",
      passwordHash: opts.passwordHash === undefined ? hash : opts.passwordHash,
    });

  it("signs in with the right password: a live session row, an audit event, counters cleared", async () => {
    const u = await user();
    const ip = `10.0.0.${++seq % 250}`;
    await signInWithPassword(t.db, { email: u.email, password: "wrong password!", ip, userAgent: null });
    const outcome = await signInWithPassword(t.db, {
      email: u.email.toUpperCase(),
      password: PASSWORD,
      ip,
      userAgent: "vitest",
    });
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.user.id).toBe(u.id);
    expect(outcome.session.id).toBe(sessionIdFromToken(outcome.token));
    const found = await findValidSession(t.db, outcome.token);
    expect(found?.user.id).toBe(u.id);
    expect(found?.session.userAgent).toBe("vitest");
    expect(found?.session.ip).toBe(ip);
    const events = await listAuditEvents(t.db, { userId: u.id });
    expect(events.map((e) => e.action)).toEqual(["auth.sign_in", "auth.sign_in_failed"]);
    expect(events[1]?.data).toMatchObject({ reason: "wrong_password" });
    // The success cleared the address's failures and took its own hit back from the IP's.
    const email = await hitRateLimit(t.db, `signin:email:${u.email.toLowerCase()}`, { ...SIGN_IN_LIMITS.email });
    expect(email.count).toBe(1);
    const byIp = await hitRateLimit(t.db, `signin:ip:${ip}`, { ...SIGN_IN_LIMITS.ip });
    expect(byIp.count).toBe(2); // the failure, plus this probe
  });

  it("wrong password, unknown email and a password-less account give the same answer", async () => {
    const u = await user();
    const nopass = await user({ passwordHash: null });
    const outcomes = [
      await signInWithPassword(t.db, { email: u.email, password: "not the password", ip: "10.1.0.1", userAgent: null }),
      await signInWithPassword(t.db, {
        email: `${uniq("nobody")}@example.com`,
        password: PASSWORD,
        ip: "10.1.0.1",
        userAgent: null,
      }),
      await signInWithPassword(t.db, { email: nopass.email, password: PASSWORD, ip: "10.1.0.1", userAgent: null }),
    ];
    for (const o of outcomes) expect(o).toEqual({ ok: false, reason: "invalid_credentials" });
    expect(signInError({ ok: false, reason: "invalid_credentials" })).toMatchObject({
      status: 401,
      code: "invalid_credentials",
      detail: "Wrong email or password.",
    });
    const reasons = (await listAuditEvents(t.db, { userId: nopass.id })).map(
      (e) => (e.data as { reason: string }).reason,
    );
    expect(reasons).toEqual(["no_password"]);
  });

  it("a wrong email takes as long as a wrong password (both run scrypt)", async () => {
    const u = await user();
    const time = async (email: string) => {
      const start = performance.now();
      await signInWithPassword(t.db, {
        email,
        password: "definitely wrong",
        ip: `10.2.${++seq % 250}.1`,
        userAgent: null,
      });
      return performance.now() - start;
    };
    // Warm up (the dummy hash is computed once per process), then take medians.
    await time(`${uniq("warm")}@example.com`);
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 5; i++) {
      known.push(await time(u.email));
      unknown.push(await time(`${uniq("ghost")}@example.com`));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const ratio = median(unknown) / median(known);
    expect(ratio, `unknown ${median(unknown).toFixed(1)} ms vs known ${median(known).toFixed(1)} ms`).toBeGreaterThan(
      0.5,
    );
    expect(ratio).toBeLessThan(2);
    // scrypt with N=2^15 is far from free: a miss that skipped it would be ~1 ms.
    expect(SCRYPT_PARAMS.N).toBeGreaterThanOrEqual(2 ** 14);
    expect(median(unknown)).toBeGreaterThan(5);
  });

  it("limits attempts per email address: the 11th in 15 minutes is refused, right password or not", async () => {
    const u = await user();
    const now = Date.now();
    for (let i = 0; i < SIGN_IN_LIMITS.email.limit; i++) {
      const o = await signInWithPassword(t.db, {
        email: u.email,
        password: `wrong ${i}`,
        ip: `10.3.${i}.1`,
        userAgent: null,
        now: now + i,
      });
      expect(o).toEqual({ ok: false, reason: "invalid_credentials" });
    }
    const blocked = await signInWithPassword(t.db, {
      email: u.email,
      password: PASSWORD,
      ip: "10.3.99.1",
      userAgent: null,
      now: now + 100,
    });
    expect(blocked.ok).toBe(false);
    expect(blocked).toMatchObject({ reason: "rate_limited" });
    const retryAfterMs = (blocked as { retryAfterMs: number }).retryAfterMs;
    expect(retryAfterMs).toBeGreaterThan(14 * 60_000);
    expect(retryAfterMs).toBeLessThanOrEqual(SIGN_IN_LIMITS.email.windowMs);
    const error = signInError(blocked as Parameters<typeof signInError>[0]);
    expect(error).toMatchObject({
      status: 429,
      code: "rate_limited",
      detail: "Too many sign-in attempts. Try again in 15 minutes.",
    });
    expect(error.retryAfterSeconds).toBeGreaterThan(14 * 60);
    // One audit event for the block, however often it is hit.
    await signInWithPassword(t.db, {
      email: u.email,
      password: PASSWORD,
      ip: "10.3.99.1",
      userAgent: null,
      now: now + 200,
    });
    const blocks = await t.db
      .selectFrom("audit_events")
      .select("data")
      .where("action", "=", "auth.sign_in_failed")
      .where("data", "like", `%${u.email.toLowerCase()}%rate_limited%`)
      .execute();
    expect(blocks).toHaveLength(1);
    // After the window the address may try again.
    const later = await signInWithPassword(t.db, {
      email: u.email,
      password: PASSWORD,
      ip: "10.3.99.2",
      userAgent: null,
      now: now + SIGN_IN_LIMITS.email.windowMs + 1000,
    });
    expect(later.ok).toBe(true);
  });

  it("limits failures per client IP across addresses; successes from that IP do not count", async () => {
    const ip = `10.4.${++seq % 250}.7`;
    const now = Date.now();
    const u = await user();
    // Many people behind one address signing in successfully never trip the limit…
    for (let i = 0; i < SIGN_IN_LIMITS.ip.limit + 2; i++) {
      const o = await signInWithPassword(t.db, {
        email: u.email,
        password: PASSWORD,
        ip,
        userAgent: null,
        now: now + i,
      });
      expect(o.ok).toBe(true);
    }
    // …but spraying passwords across addresses does.
    for (let i = 0; i < SIGN_IN_LIMITS.ip.limit; i++) {
      const o = await signInWithPassword(t.db, {
        email: `${uniq("spray")}@example.com`,
        password: "Winter2026!",
        ip,
        userAgent: null,
        now: now + 100 + i,
      });
      expect(o).toEqual({ ok: false, reason: "invalid_credentials" });
    }
    const blocked = await signInWithPassword(t.db, {
      email: u.email,
      password: PASSWORD,
      ip,
      userAgent: null,
      now: now + 200,
    });
    expect(blocked).toMatchObject({ ok: false, reason: "rate_limited" });
    // Another address is unaffected.
    expect(
      (
        await signInWithPassword(t.db, {
          email: u.email,
          password: PASSWORD,
          ip: "10.4.255.1",
          userAgent: null,
          now: now + 201,
        })
      ).ok,
    ).toBe(true);
  });

  it("refundRateLimit never goes below zero", async () => {
    const key = uniq("refund");
    await refundRateLimit(t.db, key); // no row: nothing happens
    await hitRateLimit(t.db, key, { limit: 5, windowMs: 60_000 });
    await refundRateLimit(t.db, key);
    await refundRateLimit(t.db, key);
    expect((await hitRateLimit(t.db, key, { limit: 5, windowMs: 60_000 })).count).toBe(1);
  });

  it("a disabled account is refused, and says so only to someone who knows the password", async () => {
    const u = await user();
    await setUserDisabled(t.db, u.id, true);
    expect(
      await signInWithPassword(t.db, { email: u.email, password: "wrong password", ip: "10.5.0.1", userAgent: null }),
    ).toEqual({ ok: false, reason: "invalid_credentials" });
    expect(
      await signInWithPassword(t.db, { email: u.email, password: PASSWORD, ip: "10.5.0.1", userAgent: null }),
    ).toEqual({ ok: false, reason: "account_disabled" });
    expect(signInError({ ok: false, reason: "account_disabled" })).toMatchObject({
      status: 403,
      code: "account_disabled",
    });
  });

  it("rehashes a password stored with older scrypt parameters", async () => {
    const weak = `scrypt$1024$8$1$${Buffer.alloc(16, 1).toString("base64").replace(/=+$/, "")}$`;
    // Build a real hash with N=1024 by hand through the same format.
    const { scrypt } = await import("node:crypto");
    const salt = Buffer.alloc(16, 1);
    const key = await new Promise<Buffer>((resolve, reject) =>
      scrypt(PASSWORD, salt, 32, { N: 1024, r: 8, p: 1 }, (e, k) => (e ? reject(e) : resolve(k))),
    );
    const u = await user({ passwordHash: `${weak}${key.toString("base64").replace(/=+$/, "")}` });
    expect(
      (await signInWithPassword(t.db, { email: u.email, password: PASSWORD, ip: "10.6.0.1", userAgent: null })).ok,
    ).toBe(true);
    const stored = (await getUserCredentials(t.db, u.email))?.passwordHash;
    expect(stored).toMatch(new RegExp(`^scrypt\\$${SCRYPT_PARAMS.N}\\$`));
    expect(
      (await signInWithPassword(t.db, { email: u.email, password: PASSWORD, ip: "10.6.0.1", userAgent: null })).ok,
    ).toBe(true);
  });
});
