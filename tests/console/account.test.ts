import "server-only";
import { describe, expect, it } from "vitest";
import { POST as secondFactor } from "../../app/api/auth/login/second-factor/route";
import { POST as login } from "../../app/api/auth/login/route";
import { GET as me, PATCH as patchMe } from "../../app/api/me/route";
import { POST as changePassword } from "../../app/api/me/password/route";
import { GET as security } from "../../app/api/me/security/route";
import { GET as listSessions } from "../../app/api/me/sessions/route";
import { DELETE as revokeSession } from "../../app/api/me/sessions/[id]/route";
import { DELETE as disableTotp, POST as startTotp } from "../../app/api/me/totp/route";
import { POST as confirmTotp } from "../../app/api/me/totp/confirm/route";
import { POST as newRecoveryCodes } from "../../app/api/me/totp/recovery-codes/route";
import { listAuditEvents } from "../../lib/server/db/audit";
import { testBackends } from "../../lib/server/db/test-backends";
import { PENDING_LOGIN_COOKIE } from "../../lib/server/pending-login-cookie";
import { CLIENT_IP_HEADER } from "../../lib/server/request-info";
import { totpSecretAad } from "../../lib/server/second-factor";
import { decrypt } from "../../lib/server/crypto";
import { SESSION_COOKIE } from "../../lib/server/session-cookie";
import { SIGN_IN_LIMITS } from "../../lib/server/sign-in";
import { totpCode } from "../../lib/server/totp";
import {
  cookieHeaderFrom,
  jsonOf,
  makeUser,
  noParams,
  PASSWORD,
  request,
  sessionCookie,
  useConsoleDb,
} from "./helpers";

const params = (p: Record<string, string>) => ({ params: Promise.resolve(p) });
const NEW_PASSWORD = "a brand new password for the test";
let ipSeq = 0;
/** Each test signs in from its own client address, so the per-IP sign-in limit of one test does not leak into another. */
const freshIp = () => `198.51.100.${++ipSeq}`;

describe.each(testBackends)("your account on $name", (backend) => {
  const ctx = useConsoleDb(backend);

  const signIn = (email: string, password: string, ip: string) =>
    login(
      request("/api/auth/login", { method: "POST", body: { email, password }, headers: { [CLIENT_IP_HEADER]: ip } }),
      noParams,
    );
  const sendCode = (pendingCookie: string, code: string, ip: string) =>
    secondFactor(
      request("/api/auth/login/second-factor", {
        method: "POST",
        cookie: pendingCookie,
        body: { code },
        headers: { [CLIENT_IP_HEADER]: ip },
      }),
      noParams,
    );
  const nowS = () => Math.floor(Date.now() / 1000);

  /** A user with a confirmed second factor: their secret, recovery codes, a session cookie, the last code used. */
  async function withTotp() {
    const { user } = await makeUser(ctx.db(), "owner");
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const started = await startTotp(request("/api/me/totp", { method: "POST", cookie }), noParams);
    expect(started.status).toBe(200);
    const { secret, otpauth_uri, qr_data_url } = (await started.json()) as Record<string, string>;
    expect(otpauth_uri).toMatch(/^otpauth:\/\/totp\/Baton:.+\?secret=[A-Z2-7]+/);
    expect(qr_data_url).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(Buffer.from(qr_data_url!.split(",")[1]!, "base64").toString()).toContain("<svg");
    const code = await totpCode(secret!);
    const confirmed = await confirmTotp(
      request("/api/me/totp/confirm", { method: "POST", cookie, body: { code } }),
      noParams,
    );
    expect(confirmed.status).toBe(200);
    const { recovery_codes } = (await confirmed.json()) as { recovery_codes: string[] };
    return { user, secret: secret!, recoveryCodes: recovery_codes, cookie, lastCode: code };
  }

  it("changes the name, audited with before and after", async () => {
    const { user } = await makeUser(ctx.db(), "owner");
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const res = await patchMe(request("/api/me", { method: "PATCH", cookie, body: { name: "  Ana Lima " } }), noParams);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toMatchObject({ user: { name: "Ana Lima" } });
    expect(await jsonOf(await me(request("/api/me", { cookie }), noParams))).toMatchObject({
      user: { name: "Ana Lima" },
    });
    const bad = await patchMe(request("/api/me", { method: "PATCH", cookie, body: { name: "  " } }), noParams);
    expect(bad.status).toBe(422);
    const events = await listAuditEvents(ctx.db(), { userId: user.id });
    expect(events.find((e) => e.action === "user.update")?.data).toEqual({
      before: { name: "Test User" },
      after: { name: "Ana Lima" },
    });
  });

  it("a password change needs the current password, and signs out every other session but this one", async () => {
    const { user } = await makeUser(ctx.db(), "owner");
    const mine = await sessionCookie(ctx.db(), user.id);
    const other = await sessionCookie(ctx.db(), user.id);
    const change = (body: object) =>
      changePassword(request("/api/me/password", { method: "POST", cookie: mine.cookie, body }), noParams);

    const wrong = await change({ current_password: "not the password", new_password: NEW_PASSWORD });
    expect(wrong.status).toBe(422);
    expect(await jsonOf(wrong)).toMatchObject({ code: "wrong_password" });
    const short = await change({ current_password: PASSWORD, new_password: "short" });
    expect(short.status).toBe(422);
    expect((await jsonOf(short)).errors).toMatchObject({ new_password: expect.stringContaining("at least 12") });

    const ok = await change({ current_password: PASSWORD, new_password: NEW_PASSWORD });
    expect(ok.status).toBe(200);
    expect(await jsonOf(ok)).toEqual({ sessions_revoked: 1 });
    expect((await me(request("/api/me", { cookie: mine.cookie }), noParams)).status).toBe(200);
    expect((await me(request("/api/me", { cookie: other.cookie }), noParams)).status).toBe(401);

    const ip = freshIp();
    expect((await signIn(user.email, PASSWORD, ip)).status).toBe(401);
    expect((await signIn(user.email, NEW_PASSWORD, ip)).status).toBe(200);
    const events = await listAuditEvents(ctx.db(), { userId: user.id });
    expect(events.find((e) => e.action === "user.password_change")?.data).toEqual({ sessions_revoked: 1 });
  });

  it("lists the user's own sessions (this one marked) and revokes one; another user's is 404", async () => {
    const { user } = await makeUser(ctx.db(), "owner");
    const mine = await sessionCookie(ctx.db(), user.id);
    const other = await sessionCookie(ctx.db(), user.id);
    const stranger = await makeUser(ctx.db(), "owner");
    const theirs = await sessionCookie(ctx.db(), stranger.user.id);

    const list = async () =>
      (
        (await (await listSessions(request("/api/me/sessions", { cookie: mine.cookie }), noParams)).json()) as {
          sessions: { id: string; current: boolean }[];
        }
      ).sessions;
    const before = await list();
    expect(before.map((s) => s.id).sort()).toEqual([mine.sessionId, other.sessionId].sort());
    expect(before.find((s) => s.current)?.id).toBe(mine.sessionId);

    const revoke = (id: string) =>
      revokeSession(request(`/api/me/sessions/${id}`, { method: "DELETE", cookie: mine.cookie }), params({ id }));
    expect((await revoke(theirs.sessionId)).status).toBe(404);
    expect((await me(request("/api/me", { cookie: theirs.cookie }), noParams)).status).toBe(200);
    expect((await revoke(other.sessionId)).status).toBe(200);
    expect((await me(request("/api/me", { cookie: other.cookie }), noParams)).status).toBe(401);
    expect((await list()).map((s) => s.id)).toEqual([mine.sessionId]);
    expect((await revoke("nope")).status).toBe(422);
    const events = await listAuditEvents(ctx.db(), { userId: user.id });
    expect(events.some((e) => e.action === "session.revoke")).toBe(true);
  });

  it("enrols a second factor: the secret is stored encrypted and bound to the user; a wrong first code is refused", async () => {
    const { user } = await makeUser(ctx.db(), "owner");
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const { secret } = (await (
      await startTotp(request("/api/me/totp", { method: "POST", cookie }), noParams)
    ).json()) as { secret: string };
    const row = await ctx
      .db()
      .selectFrom("user_totp")
      .selectAll()
      .where("user_id", "=", user.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_ciphertext).not.toContain(secret);
    expect(decrypt(row.secret_ciphertext, { aad: totpSecretAad(user.id) })).toBe(secret);
    expect(() => decrypt(row.secret_ciphertext, { aad: totpSecretAad("usr_someone_else") })).toThrow();

    const wrong = await confirmTotp(
      request("/api/me/totp/confirm", {
        method: "POST",
        cookie,
        body: { code: "000000" === (await totpCode(secret)) ? "111111" : "000000" },
      }),
      noParams,
    );
    expect(wrong.status).toBe(422);
    expect(await jsonOf(wrong)).toMatchObject({ code: "wrong_code" });
    // Not in force yet: password sign-in still answers a session.
    const signedIn = await signIn(user.email, PASSWORD, freshIp());
    expect(await jsonOf(signedIn)).toMatchObject({ user: { id: user.id } });
    expect(await jsonOf(await security(request("/api/me/security", { cookie }), noParams))).toMatchObject({
      has_password: true,
      totp: { enabled: false, enrolling: true, recovery_codes_left: 0 },
    });
  });

  it("password sign-in then asks for a code; a code is accepted once (replay refused); a recovery code works once", async () => {
    const { user, secret, recoveryCodes, cookie, lastCode } = await withTotp();
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    expect(await jsonOf(await security(request("/api/me/security", { cookie }), noParams))).toMatchObject({
      totp: { enabled: true, enrolling: false, recovery_codes_left: 10 },
    });
    const ip = freshIp();

    // Step one: the password. No session cookie, a pending one.
    const first = await signIn(user.email, PASSWORD, ip);
    expect(first.status).toBe(200);
    expect(await jsonOf(first)).toEqual({ second_factor_required: true });
    const set = first.headers.getSetCookie();
    expect(set.some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false);
    expect(set.find((c) => c.startsWith(`${PENDING_LOGIN_COOKIE}=`))).toMatch(
      /Path=\/api\/auth\/login; Max-Age=300; HttpOnly; SameSite=Strict/,
    );
    const pending = cookieHeaderFrom(first);

    // No pending cookie: expired.
    expect(await jsonOf(await sendCode("", lastCode, ip))).toMatchObject({ code: "sign_in_expired" });
    // The code used to confirm enrolment cannot be used again.
    const replay = await sendCode(pending, lastCode, ip);
    expect(replay.status).toBe(401);
    expect(await jsonOf(replay)).toMatchObject({ code: "invalid_code" });
    // The next step's code passes (±1 step of drift is allowed), and signs in.
    const next = await totpCode(secret, nowS() + 30);
    const ok = await sendCode(pending, next, ip);
    expect(ok.status).toBe(200);
    expect(await jsonOf(ok)).toMatchObject({ user: { id: user.id } });
    const session = cookieHeaderFrom(ok)
      .split("; ")
      .find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect(session).toBeDefined();
    expect((await me(request("/api/me", { cookie: session }), noParams)).status).toBe(200);
    // The pending sign-in is used up, and the same code again is a replay.
    expect((await sendCode(pending, next, ip)).status).toBe(401);
    const again = cookieHeaderFrom(await signIn(user.email, PASSWORD, ip));
    expect(await jsonOf(await sendCode(again, next, ip))).toMatchObject({ code: "invalid_code" });

    // A recovery code, typed in capitals and without dashes, signs in once.
    const recovery = recoveryCodes[0]!;
    const typed = recovery.replace(/-/g, "").toUpperCase();
    expect((await sendCode(again, typed, ip)).status).toBe(200);
    const third = cookieHeaderFrom(await signIn(user.email, PASSWORD, ip));
    expect(await jsonOf(await sendCode(third, recovery, ip))).toMatchObject({ code: "invalid_code" });
    expect(await jsonOf(await security(request("/api/me/security", { cookie }), noParams))).toMatchObject({
      totp: { recovery_codes_left: 9 },
    });

    const events = await listAuditEvents(ctx.db(), { userId: user.id });
    expect(events.filter((e) => e.action === "auth.sign_in").map((e) => e.data)).toEqual(
      expect.arrayContaining([
        { method: "password", second_factor: "totp" },
        { method: "password", second_factor: "recovery_code" },
      ]),
    );
    expect(events.some((e) => e.action === "user.totp_enable")).toBe(true);
  });

  it("wrong codes count toward the sign-in lockout, and five end a pending sign-in", async () => {
    const { user, secret } = await withTotp();
    const ip = freshIp();
    const wrong = async (pending: string) => sendCode(pending, "12345", ip); // never a valid code
    // Five wrong codes end the pending sign-in.
    let pending = cookieHeaderFrom(await signIn(user.email, PASSWORD, ip));
    for (let i = 0; i < 4; i++) expect(await jsonOf(await wrong(pending))).toMatchObject({ code: "invalid_code" });
    const fifth = await wrong(pending);
    expect(fifth.status).toBe(401);
    expect(fifth.headers.getSetCookie().some((c) => c.startsWith(`${PENDING_LOGIN_COOKIE}=;`))).toBe(true);
    expect(await jsonOf(await sendCode(pending, await totpCode(secret, nowS() + 30), ip))).toMatchObject({
      code: "sign_in_expired",
    });
    // 1 password + 5 codes so far count against the address; the limit is 10 per window.
    pending = cookieHeaderFrom(await signIn(user.email, PASSWORD, ip));
    for (let i = 0; i < SIGN_IN_LIMITS.email.limit - 7; i++) await wrong(pending);
    const locked = await wrong(pending);
    expect(locked.status).toBe(429);
    expect(await jsonOf(locked)).toMatchObject({ code: "rate_limited" });
    // Even the right code and the right password are refused now.
    expect((await sendCode(pending, await totpCode(secret, nowS() + 30), ip)).status).toBe(429);
    expect((await signIn(user.email, PASSWORD, ip)).status).toBe(429);
  });

  it("new recovery codes need a current code and replace the old ones; turning it off needs the password", async () => {
    const { user, secret, recoveryCodes, cookie } = await withTotp();
    const regen = (code: string) =>
      newRecoveryCodes(request("/api/me/totp/recovery-codes", { method: "POST", cookie, body: { code } }), noParams);
    expect((await regen("000001")).status).toBe(422);
    const fresh = await regen(await totpCode(secret, nowS() + 30));
    expect(fresh.status).toBe(200);
    const { recovery_codes } = (await fresh.json()) as { recovery_codes: string[] };
    expect(recovery_codes).toHaveLength(10);
    expect(recovery_codes).not.toContain(recoveryCodes[0]);
    const ip = freshIp();
    const pending = cookieHeaderFrom(await signIn(user.email, PASSWORD, ip));
    expect((await sendCode(pending, recoveryCodes[1]!, ip)).status).toBe(401);

    const off = (body: object) => disableTotp(request("/api/me/totp", { method: "DELETE", cookie, body }), noParams);
    expect((await off({})).status).toBe(422);
    expect(await jsonOf(await off({ password: "wrong password!" }))).toMatchObject({ code: "wrong_password" });
    expect((await off({ password: PASSWORD })).status).toBe(200);
    expect(await jsonOf(await signIn(user.email, PASSWORD, ip))).toMatchObject({ user: { id: user.id } });
    expect((await off({ password: PASSWORD })).status).toBe(409);
    // A second enrolment is refused while one is on; after turning off, a new one starts.
    expect((await startTotp(request("/api/me/totp", { method: "POST", cookie }), noParams)).status).toBe(200);
    const events = await listAuditEvents(ctx.db(), { userId: user.id });
    expect(events.some((e) => e.action === "user.totp_disable")).toBe(true);
  });

  it("a second enrolment is refused while the second factor is on", async () => {
    const { cookie } = await withTotp();
    const res = await startTotp(request("/api/me/totp", { method: "POST", cookie }), noParams);
    expect(res.status).toBe(409);
    expect(await jsonOf(res)).toMatchObject({ code: "totp_enabled" });
  });
});
