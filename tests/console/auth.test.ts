import "server-only";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { GET as nextAuthGet, POST as nextAuthPost } from "../../app/api/auth/[...nextauth]/route";
import { POST as login } from "../../app/api/auth/login/route";
import { POST as logoutEverywhere } from "../../app/api/auth/logout-everywhere/route";
import { POST as logout } from "../../app/api/auth/logout/route";
import { GET as me } from "../../app/api/me/route";
import { POST as setup } from "../../app/api/setup/route";
import { getUserFromRequest, loginPath, resolveSession, safeNextPath, TOUCH_INTERVAL_MS } from "../../lib/server/auth";
import { listAuditEvents } from "../../lib/server/db/audit";
import { createSession, findValidSession, listActiveSessions } from "../../lib/server/db/sessions";
import { isFirstRun } from "../../lib/server/db/setup";
import { testBackends } from "../../lib/server/db/test-backends";
import { setUserDisabled } from "../../lib/server/db/users";
import { decode } from "next-auth/jwt";
import { authSecret, readSessionId, SESSION_COOKIE } from "../../lib/server/session-cookie";
import { markFrontDoor } from "../../lib/server/request-info";
import { getEnv } from "../../lib/server/env";
import { SETUP_CODE_LIMITS } from "../../lib/server/setup-attempts";
import { SIGN_IN_LIMITS } from "../../lib/server/sign-in";
import {
  cookieHeaderFrom,
  jsonOf,
  makeUser,
  noParams,
  ORIGIN,
  PASSWORD,
  request,
  sessionCookie,
  uniq,
  useConsoleDb,
} from "./helpers";

/** The header the console's front door writes the client's address into (lib/server/request-info.ts CLIENT_IP_HEADER). */
const CLIENT_IP_HEADER_NAME = "x-baton-client-ip";
const nextauthParams = (...segments: string[]) => ({ params: Promise.resolve({ nextauth: segments }) });

describe("safe redirects", () => {
  it("accepts same-origin paths only", () => {
    expect(safeNextPath("/sandboxes?x=1")).toBe("/sandboxes?x=1");
    for (const bad of ["//evil.example", "/\\evil.example", "https://evil.example", "sandboxes", "", null, "/a\nb"])
      expect(safeNextPath(bad)).toBeNull();
    expect(loginPath("/volumes")).toBe("/login?next=%2Fvolumes");
    expect(loginPath("/")).toBe("/login");
    expect(loginPath("//evil")).toBe("/login");
  });
});

describe.each(testBackends)("sign-in, sessions and sign-out on $name", (backend) => {
  const ctx = useConsoleDb(backend);

  async function signIn(email: string, password = PASSWORD, headers: Record<string, string> = {}) {
    return login(request("/api/auth/login", { method: "POST", body: { email, password }, headers }), noParams);
  }

  describe("first run", () => {
    it("a page on another host name (DNS rebinding to 127.0.0.1) cannot run the first-run setup: 421", async () => {
      // The default configuration: no BATON_URL, so the loopback names on the console's port.
      vi.stubEnv("BATON_URL", "");
      vi.stubEnv("PORT", "3000");
      try {
        const body = { name: "Eve", email: "eve@example.com", password: PASSWORD, team_name: "Evil" };
        // What the rebinding page's fetch sends: its own name in Host and Origin, same-origin.
        const rebinding = {
          host: "evil.example:3000",
          origin: "http://evil.example:3000",
          "sec-fetch-site": "same-origin",
        };
        const res = await setup(request("/api/setup", { method: "POST", body, headers: rebinding }), noParams);
        expect(res.status).toBe(421);
        expect(await jsonOf(res)).toEqual({
          detail: expect.stringContaining("BATON_ALLOWED_HOSTS"),
          code: "host_not_allowed",
        });
        expect(res.headers.getSetCookie()).toEqual([]);
        expect(await isFirstRun(ctx.db())).toBe(true);
        // next-auth's own routes (not built with route()) too.
        const session = await nextAuthGet(
          request("/api/auth/session", { headers: { host: "evil.example:3000" } }) as never,
          nextauthParams("session"),
        );
        expect(session.status).toBe(421);
        // The console's own name on its port is served.
        const invalid = await setup(
          request("/api/setup", {
            method: "POST",
            body: { ...body, password: "short" },
            headers: { ...rebinding, host: "localhost:3000", origin: "http://localhost:3000" },
          }),
          noParams,
        );
        expect(invalid.status).toBe(422);
      } finally {
        vi.stubEnv("BATON_URL", ORIGIN);
      }
    });

    it("wrong setup codes are limited per client address as failed sign-ins are: 429 with Retry-After, audited", async () => {
      const owner = { name: "Mallory", email: "mallory@example.com", password: PASSWORD, team_name: "Guessers" };
      // The front door's address for the client; its own X-Forwarded-For rotates and changes nothing.
      const attempt = (ip: string, code: string, i = 0) =>
        setup(
          request("/api/setup", {
            method: "POST",
            body: { ...owner, setup_code: code },
            headers: { [CLIENT_IP_HEADER_NAME]: ip, "x-forwarded-for": `198.51.100.${i}` },
          }),
          noParams,
        );
      for (let i = 0; i < SETUP_CODE_LIMITS.limit; i++)
        expect((await attempt("192.0.2.90", `AAAA-BBBB-${String(i).padStart(4, "2")}`, i)).status).toBe(403);
      // Locked out, even with the right code: what a guesser's lucky guess gets.
      const code = fs.readFileSync(path.join(getEnv().BATON_DATA_DIR, "setup-code"), "utf8").trim();
      const locked = await attempt("192.0.2.90", code, 99);
      expect(locked.status).toBe(429);
      const retryAfter = Number(locked.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThan(14 * 60);
      expect(retryAfter).toBeLessThanOrEqual(15 * 60);
      expect(await jsonOf(locked)).toMatchObject({
        code: "rate_limited",
        detail: expect.stringContaining("Too many wrong setup codes from this address. Try again in 15 minutes"),
        retry_after_seconds: retryAfter,
      });
      expect(locked.headers.getSetCookie()).toEqual([]);
      expect(await isFirstRun(ctx.db())).toBe(true);
      // Another address is not held back by this one's guesses.
      expect((await attempt("192.0.2.91", "AAAA-BBBB-CCCC")).status).toBe(403);
      // Each wrong code is in the audit log, and the lockout once.
      const audited = await ctx
        .db()
        .selectFrom("audit_events")
        .select(["action", "data"])
        .where("ip", "=", "192.0.2.90")
        .execute();
      expect(audited.map((e) => `${e.action} ${JSON.parse(e.data ?? "{}").reason}`)).toEqual([
        ...Array(SETUP_CODE_LIMITS.limit).fill("auth.setup_failed bad_setup_code"),
        "auth.setup_failed rate_limited",
      ]);
    });

    it("POST /api/setup creates the owner and the first team, signs them in, and then refuses", async () => {
      expect(await isFirstRun(ctx.db())).toBe(true);
      const invalid = await setup(
        request("/api/setup", {
          method: "POST",
          body: { name: "", email: "not-an-email", password: "short", team_name: "x".repeat(101) },
        }),
        noParams,
      );
      expect(invalid.status).toBe(422);
      const invalidBody = await jsonOf(invalid);
      expect(invalidBody.detail).toBe(
        "Name: is required. Email: is not a valid email address. Password: must be at least 12 characters. Team name: must be at most 100 characters.",
      );
      expect(Object.keys(invalidBody.errors as object)).toEqual(["name", "email", "password", "team_name"]);

      // The setup code the server printed (and keeps in the data dir); without it, or a wrong one, 403.
      const owner = {
        name: "Ada Lovelace",
        email: "Ada@Example.com",
        password: PASSWORD,
        team_name: "Analytical Engines",
      };
      for (const wrong of [undefined, "", "AAAA-BBBB-CCCC"]) {
        const refused = await setup(
          request("/api/setup", { method: "POST", body: { ...owner, setup_code: wrong } }),
          noParams,
        );
        expect(refused.status, String(wrong)).toBe(403);
        expect(await jsonOf(refused)).toMatchObject({
          code: "bad_setup_code",
          detail: expect.stringContaining("not the setup code"),
        });
      }
      expect(await isFirstRun(ctx.db())).toBe(true);
      const codeFile = path.join(getEnv().BATON_DATA_DIR, "setup-code");
      const code = fs.readFileSync(codeFile, "utf8").trim();
      expect(code).toMatch(/^[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}$/);
      expect(fs.statSync(codeFile).mode & 0o777).toBe(0o600);
      // Typed in lower case with spaces, as from a terminal: accepted.
      const res = await setup(
        request("/api/setup", {
          method: "POST",
          body: { ...owner, setup_code: ` ${code.toLowerCase().replace(/-/g, " ")} ` },
        }),
        noParams,
      );
      expect(res.status).toBe(201);
      expect(fs.existsSync(codeFile)).toBe(false); // done with
      const body = await jsonOf(res);
      expect(body).toMatchObject({
        user: { name: "Ada Lovelace", email: "Ada@Example.com" },
        team: { name: "Analytical Engines", slug: "analytical-engines" },
      });
      const cookie = cookieHeaderFrom(res);
      expect(cookie).toMatch(new RegExp(`^${SESSION_COOKIE.replace(/\./g, "\\.")}=`));
      const whoami = await jsonOf(await me(request("/api/me", { cookie }), noParams));
      expect(whoami).toMatchObject({
        user: { email: "Ada@Example.com" },
        memberships: [{ role: "owner", team: { slug: "analytical-engines" } }],
      });
      expect(await isFirstRun(ctx.db())).toBe(false);

      const again = await setup(
        request("/api/setup", {
          method: "POST",
          body: { name: "Eve", email: "eve@example.com", password: PASSWORD, team_name: "Evil" },
        }),
        noParams,
      );
      expect(again.status).toBe(409);
      expect(await jsonOf(again)).toEqual({
        detail: "Baton is already set up. Sign in instead.",
        code: "already_set_up",
      });
      const actions = (await listAuditEvents(ctx.db(), { userId: (body.user as { id: string }).id })).map(
        (e) => e.action,
      );
      expect(actions).toEqual(expect.arrayContaining(["auth.setup", "auth.sign_in"]));
    });
  });

  it("POST /api/auth/login sets next-auth's cookie, whose JWT holds only the session id", async () => {
    const { user } = await makeUser(ctx.db());
    const res = await signIn(user.email);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ user: { id: user.id, name: user.name, email: user.email } });
    const setCookies = res.headers.getSetCookie();
    // The session cookie and the device cookie only: not next-auth's CSRF or callback cookies.
    expect(setCookies).toHaveLength(2);
    expect(setCookies[0]).toMatch(/^next-auth\.session-token=[^;]+; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Lax$/);
    expect(setCookies[1]).toMatch(
      /^baton-device=[\w-]+\.[\w-]+; Path=\/api\/auth\/login; Max-Age=31536000; HttpOnly; SameSite=Strict$/,
    );
    const jwt = setCookies[0]!.split(";", 1)[0]!.split("=")[1]!;
    const payload = await decode({ token: jwt, secret: authSecret() });
    expect(Object.keys(payload ?? {}).sort()).toEqual(["exp", "iat", "jti", "sid"]);
    expect(JSON.stringify(payload)).not.toContain(user.email);
    const sid = await readSessionId([{ name: SESSION_COOKIE, value: jwt }]);
    const found = await findValidSession(ctx.db(), sid!);
    expect(found?.user.id).toBe(user.id);
    expect(found?.session).toMatchObject({ ip: "192.0.2.10", userAgent: "vitest" });
  });

  it("over HTTPS the cookie is __Secure- and Secure", async () => {
    const { user } = await makeUser(ctx.db());
    const res = await signIn(user.email, PASSWORD, { "x-forwarded-proto": "https" });
    expect(res.headers.getSetCookie()[0]).toMatch(/^__Secure-next-auth\.session-token=.*; Secure/);
    expect(res.headers.getSetCookie()[1]).toMatch(/^__Secure-baton-device=.*; Secure$/);
    const cookie = cookieHeaderFrom(res);
    expect((await me(request("/api/me", { cookie }), noParams)).status).toBe(200);
  });

  it("wrong password and unknown email: the same 401, no cookie", async () => {
    const { user } = await makeUser(ctx.db());
    const wrong = await signIn(user.email, "not the password at all");
    const unknown = await signIn(`${uniq("ghost")}@example.com`);
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(await jsonOf(res)).toEqual({ detail: "Wrong email or password.", code: "invalid_credentials" });
      expect(res.headers.getSetCookie()).toEqual([]);
    }
    const missing = await login(request("/api/auth/login", { method: "POST", body: { email: user.email } }), noParams);
    expect(missing.status).toBe(422);
    expect(await jsonOf(missing)).toMatchObject({ detail: "Password: is required.", code: "validation_error" });
  });

  it("the 11th attempt for an address within 15 minutes answers 429 with Retry-After", async () => {
    const { user } = await makeUser(ctx.db());
    for (let i = 0; i < SIGN_IN_LIMITS.email.limit; i++) {
      expect((await signIn(user.email, `wrong password ${i}`, { "x-forwarded-for": `198.51.100.${i}` })).status).toBe(
        401,
      );
    }
    const res = await signIn(user.email, PASSWORD, { "x-forwarded-for": "198.51.100.200" });
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(14 * 60);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(await jsonOf(res)).toEqual({
      detail: "Too many sign-in attempts. Try again in 15 minutes.",
      code: "rate_limited",
      retry_after_seconds: retryAfter,
    });
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it("a stranger hammering the owner's address locks out strangers, not the owner's own browser (device cookie)", async () => {
    const { user } = await makeUser(ctx.db());
    // The owner signed in from this browser before: it holds a device cookie for the address.
    const first = await signIn(user.email, PASSWORD, { [CLIENT_IP_HEADER_NAME]: "192.0.2.31" });
    expect(first.status).toBe(200);
    // (soft: without one, the browser just sends none, and the owner's attempt below shows the difference)
    const device =
      first.headers
        .getSetCookie()
        .find((c) => c.startsWith("baton-device="))
        ?.split(";", 1)[0] ?? "";
    expect.soft(device).toMatch(/^baton-device=/);

    // A stranger, from a new address every time (a botnet), until the address's limit holds…
    const stranger = (i: number, password = `guess ${i}`) =>
      signIn(user.email, password, { [CLIENT_IP_HEADER_NAME]: `198.51.100.${i}` });
    for (let i = 0; i < SIGN_IN_LIMITS.email.limit; i++) expect((await stranger(i)).status).toBe(401);
    expect((await stranger(50)).status).toBe(429);
    // …and it holds for the right password too: a stranger's lucky guess gets nowhere.
    expect((await stranger(51, PASSWORD)).status).toBe(429);
    // Another account's device cookie, or a forged one, is no way around it.
    const forged = `baton-device=${"A".repeat(22)}.${"B".repeat(43)}`;
    expect(
      (await signIn(user.email, PASSWORD, { [CLIENT_IP_HEADER_NAME]: "198.51.100.52", cookie: forged })).status,
    ).toBe(429);

    // The owner's browser, from wherever, signs in with the right password meanwhile.
    const owner = await signIn(user.email, PASSWORD, { [CLIENT_IP_HEADER_NAME]: "192.0.2.32", cookie: device });
    expect(owner.status).toBe(200);
    // The strangers' count against the address is still there.
    expect((await stranger(53, PASSWORD)).status).toBe(429);

    // A stolen device cookie does not give unlimited guesses either: it has a limit of its own.
    for (let i = 0; i < SIGN_IN_LIMITS.device.limit; i++) {
      expect(
        (await signIn(user.email, `guess ${i}`, { [CLIENT_IP_HEADER_NAME]: `203.0.113.${i}`, cookie: device })).status,
      ).toBe(401);
    }
    expect(
      (await signIn(user.email, PASSWORD, { [CLIENT_IP_HEADER_NAME]: "203.0.113.99", cookie: device })).status,
    ).toBe(429);
  });

  it("40 failed sign-ins with a rotating X-Forwarded-For are limited per client: the address is the front door's, not the client's word", async () => {
    // Each attempt is for another (unknown) address, so only the per-IP limit can stop them.
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      // The front door wrote the socket's address; the client's own X-Forwarded-For/X-Real-IP rotate.
      const headers = {
        [CLIENT_IP_HEADER_NAME]: "192.0.2.77",
        "x-forwarded-for": `198.51.100.${i}`,
        "x-real-ip": `203.0.113.${i}`,
      };
      statuses.push((await signIn(`${uniq("nobody")}@example.com`, "wrong password", headers)).status);
    }
    expect(statuses.slice(0, SIGN_IN_LIMITS.ip.limit)).toEqual(Array(SIGN_IN_LIMITS.ip.limit).fill(401));
    expect(statuses.slice(SIGN_IN_LIMITS.ip.limit)).toEqual(Array(40 - SIGN_IN_LIMITS.ip.limit).fill(429));
  });

  it("without the front door (next dev, a plain next start) no header names the client: one shared, strict bucket", async () => {
    markFrontDoor(false);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) {
        // Everything a client could rotate, the front door's own header included.
        const headers = {
          [CLIENT_IP_HEADER_NAME]: `192.0.2.${100 + i}`,
          "x-forwarded-for": `198.51.100.${i}`,
          "x-real-ip": `203.0.113.${i}`,
        };
        statuses.push((await signIn(`${uniq("nobody")}@example.com`, "wrong password", headers)).status);
      }
      expect(statuses.filter((s) => s === 429)).toHaveLength(40 - SIGN_IN_LIMITS.ip.limit);
    } finally {
      markFrontDoor(true);
    }
  });

  it("a cross-site sign-in attempt is refused (login CSRF)", async () => {
    const { user } = await makeUser(ctx.db());
    const res = await signIn(user.email, PASSWORD, { origin: "https://evil.example", "sec-fetch-site": "cross-site" });
    expect(res.status).toBe(403);
    expect((await jsonOf(res)).code).toBe("bad_origin");
  });

  it("next-auth's own credentials routes are closed (one door, with the rate limits)", async () => {
    for (const route of [
      ["callback", "credentials"],
      ["signin", "credentials"],
    ]) {
      const res = await nextAuthPost(
        request(`/api/auth/${route.join("/")}`, { method: "POST" }) as never,
        nextauthParams(...route),
      );
      expect(res.status).toBe(404);
    }
  });

  it("next-auth's own routes read at most 64 KiB of body, chunked or not, and refuse cross-site posts", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 32 * 1024 * 1024) return controller.close();
        controller.enqueue(new Uint8Array(16 * 1024).fill(0x61));
        pulled += 16 * 1024;
      },
    });
    const big = new Request(`${ORIGIN}/api/auth/signout`, {
      method: "POST",
      headers: {
        host: "baton.test",
        origin: ORIGIN,
        "sec-fetch-site": "same-origin",
        "content-type": "application/x-www-form-urlencoded",
      },
      body,
      duplex: "half",
    } as RequestInit);
    const res = await nextAuthPost(big as never, nextauthParams("signout"));
    expect(res.status).toBe(413);
    expect(await jsonOf(res)).toMatchObject({ code: "payload_too_large" });
    expect(pulled).toBeLessThan(1024 * 1024);
    const crossSite = await nextAuthPost(
      request("/api/auth/signout", {
        method: "POST",
        headers: { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      }) as never,
      nextauthParams("signout"),
    );
    expect(crossSite.status).toBe(403);
  });

  it("sign out revokes the session server-side: the old cookie stops working", async () => {
    const { user } = await makeUser(ctx.db());
    const cookie = cookieHeaderFrom(await signIn(user.email));
    expect((await me(request("/api/me", { cookie }), noParams)).status).toBe(200);
    const out = await logout(request("/api/auth/logout", { method: "POST", cookie }), noParams);
    expect(out.status).toBe(200);
    expect(await jsonOf(out)).toEqual({ signed_out: true });
    expect(out.headers.getSetCookie()).toEqual([
      expect.stringMatching(
        /^next-auth\.session-token=; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; SameSite=Lax$/,
      ),
    ]);
    // A client that kept the cookie gets nothing for it.
    const after = await me(request("/api/me", { cookie }), noParams);
    expect(after.status).toBe(401);
    // Signing out without a session is harmless.
    expect(await jsonOf(await logout(request("/api/auth/logout", { method: "POST" }), noParams))).toEqual({
      signed_out: false,
    });
    expect((await listAuditEvents(ctx.db(), { userId: user.id })).map((e) => e.action)).toContain("auth.sign_out");
  });

  it("sign out everywhere revokes every session of the user, and only theirs", async () => {
    const { user } = await makeUser(ctx.db());
    const other = await makeUser(ctx.db());
    const a = cookieHeaderFrom(await signIn(user.email));
    const b = cookieHeaderFrom(await signIn(user.email));
    const c = cookieHeaderFrom(await signIn(other.user.email));
    expect(await listActiveSessions(ctx.db(), user.id)).toHaveLength(2);
    const res = await logoutEverywhere(request("/api/auth/logout-everywhere", { method: "POST", cookie: a }), noParams);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ sessions_revoked: 2 });
    for (const cookie of [a, b]) expect((await me(request("/api/me", { cookie }), noParams)).status).toBe(401);
    expect((await me(request("/api/me", { cookie: c }), noParams)).status).toBe(200);
    expect(await listActiveSessions(ctx.db(), user.id)).toHaveLength(0);
    const events = await listAuditEvents(ctx.db(), { userId: user.id });
    expect(events.find((e) => e.action === "auth.sign_out_everywhere")?.data).toEqual({ sessions_revoked: 2 });
    // It needs a session (and a same-origin request).
    expect((await logoutEverywhere(request("/api/auth/logout-everywhere", { method: "POST" }), noParams)).status).toBe(
      401,
    );
  });

  it("an expired session or a disabled user is no session", async () => {
    const { user } = await makeUser(ctx.db());
    const now = Date.now();
    const short = await sessionCookie(ctx.db(), user.id, { ttlMs: 60_000, now });
    expect(await resolveSession(ctx.db(), short.token, now + 59_000)).not.toBeNull();
    expect(await resolveSession(ctx.db(), short.token, now + 61_000)).toBeNull();

    const live = await sessionCookie(ctx.db(), user.id);
    expect((await me(request("/api/me", { cookie: live.cookie }), noParams)).status).toBe(200);
    await setUserDisabled(ctx.db(), user.id, true);
    expect((await me(request("/api/me", { cookie: live.cookie }), noParams)).status).toBe(401);
  });

  it("records activity at most once a minute", async () => {
    const { user } = await makeUser(ctx.db());
    const t0 = Date.now();
    const { token } = await createSession(ctx.db(), { userId: user.id, now: t0 });
    const lastSeen = async () => (await findValidSession(ctx.db(), token, { now: t0 }))!.session.lastSeenAt.getTime();
    await resolveSession(ctx.db(), token, t0 + 30_000);
    expect(await lastSeen()).toBe(t0);
    const resolved = await resolveSession(ctx.db(), token, t0 + TOUCH_INTERVAL_MS + 1);
    expect(resolved?.session.lastSeenAt.getTime()).toBe(t0 + TOUCH_INTERVAL_MS + 1);
    expect(await lastSeen()).toBe(t0 + TOUCH_INTERVAL_MS + 1);
    await resolveSession(ctx.db(), token, t0 + TOUCH_INTERVAL_MS + 30_000);
    expect(await lastSeen()).toBe(t0 + TOUCH_INTERVAL_MS + 1);
  });

  it("GET /api/me answers a DTO without secrets", async () => {
    const { user } = await makeUser(ctx.db(), "viewer");
    const { cookie, token, sessionId } = await sessionCookie(ctx.db(), user.id);
    const res = await me(request("/api/me", { cookie }), noParams);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({
      user: { id: user.id, email: user.email },
      session: { id: sessionId },
      memberships: [{ role: "viewer" }],
    });
    expect(text).not.toContain(token);
    expect(text).not.toContain("scrypt$");
    expect((await getUserFromRequest(request("/api/me", { cookie })))?.user.id).toBe(user.id);
  });
});
