import "server-only";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GET as adminDomainsGet, POST as adminDomainsPost } from "../../app/api/admin/sso-domains/route";
import { GET as ssoCallback } from "../../app/api/auth/sso/callback/route";
import { GET as ssoStart } from "../../app/api/auth/sso/start/route";
import { POST as login } from "../../app/api/auth/login/route";
import { GET as me } from "../../app/api/me/route";
import { DELETE as ssoDelete, GET as ssoGet, PUT as ssoPut } from "../../app/api/team/sso/route";
import { POST as ssoTest } from "../../app/api/team/sso/test/route";
import { GET as ssoTestResult } from "../../app/api/team/sso/test-result/route";
import { hashPassword, decrypt } from "../../lib/server/crypto";
import { listAuditEvents } from "../../lib/server/db/audit";
import { setSetting } from "../../lib/server/db/settings";
import { clientSecretAad, INSTANCE_OWNER_KEY } from "../../lib/server/db/sso";
import { addMember, createTeamWithOwner, getMembership } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { createUser, findUserByEmail } from "../../lib/server/db/users";
import { redirectUri } from "../../lib/server/sso/flow";
import { ssoMessage } from "../../lib/sso-messages";
import { signInAtIdp, startTestIdp, type TestIdp } from "../helpers/oidc-idp";
import { jsonOf, noParams, ORIGIN, PASSWORD, request, sessionCookie, uniq, useConsoleDb } from "./helpers";

// Per-team SSO against a real OpenID provider the test starts (tests/helpers/oidc-idp.ts), through
// Baton's own route handlers, on SQLite and PostgreSQL.

const REDIRECT = `${ORIGIN}/api/auth/sso/callback`;
const SECRET = "idp-client-secret-0123456789";

describe.each(testBackends)("SSO with OpenID Connect on $name", (backend) => {
  const ctx = useConsoleDb(backend);
  let idp: TestIdp;
  let ownerCookie = "";
  let ownerEmail = "";
  let slug = "";
  let teamId = "";
  let domain = "";

  const config = (over: Record<string, unknown> = {}) => ({
    issuer: idp.issuer,
    client_id: "baton",
    domains: [domain],
    default_role: "viewer",
    group_claim: "groups",
    group_role_map: [
      { group: "baton-admins", role: "admin" },
      { group: "baton-devs", role: "member" },
    ],
    allowed_groups: [],
    group_sync: true,
    session_max_hours: 8,
    ...over,
  });
  const put = async (body: Record<string, unknown>, cookie = ownerCookie) =>
    ssoPut(request("/api/team/sso", { method: "PUT", cookie, body }), noParams);

  /** Start → the IdP's login form as `userId` → Baton's callback: the callback's answer. */
  async function ssoSignIn(userId: string, start = `/api/auth/sso/start?team=${slug}`) {
    const t0 = performance.now();
    const started = await ssoStart(request(start), noParams);
    expect(started.status).toBe(303);
    const location = started.headers.get("location")!;
    if (!location.startsWith(idp.issuer)) return { res: started, location, callbackUrl: "", ms: 0 };
    const callbackUrl = await signInAtIdp(location, userId, REDIRECT);
    const res = await ssoCallback(request(callbackUrl.slice(ORIGIN.length)), noParams);
    return { res, location: res.headers.get("location") ?? "", callbackUrl, ms: performance.now() - t0 };
  }
  const errorOf = (location: string) => new URL(location, ORIGIN).searchParams.get("sso_error");
  const cookieOf = (res: Response) =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(";", 1)[0])
      .join("; ");

  beforeAll(async () => {
    domain = `${uniq("acme")}.test`;
    idp = await startTestIdp({
      clients: [{ client_id: "baton", client_secret: SECRET, redirect_uris: [REDIRECT] }],
      users: {
        alice: { email: `alice@${domain}`, email_verified: true, name: "Alice", groups: ["baton-devs"] },
        bob: { email: "bob@elsewhere.test", email_verified: true, groups: ["baton-devs"] },
        carol: { email: `carol@${domain}`, email_verified: false, groups: ["baton-devs"] },
        nogroups: { email: `nog@${domain}`, email_verified: true },
        erin: { email: `erin@${domain}`, email_verified: true, groups: ["baton-devs"] },
      },
    });
    vi.stubEnv("BATON_SSO_ALLOWED_ISSUERS", idp.issuer);
    const db = ctx.db();
    ownerEmail = `root@${domain}`;
    const owner = await createUser(db, { email: ownerEmail, name: "Root", passwordHash: await hashPassword(PASSWORD) });
    slug = uniq("acme");
    const { team } = await createTeamWithOwner(db, { name: "Acme", slug, ownerId: owner.id });
    teamId = team.id;
    await setSetting(db, INSTANCE_OWNER_KEY, owner.id);
    ownerCookie = (await sessionCookie(db, owner.id)).cookie;
  });
  afterAll(async () => {
    await idp.close();
  });

  it("saves the settings with the client secret encrypted at rest and never shown", async () => {
    const res = await put({ ...config(), client_secret: SECRET });
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect(JSON.stringify(body)).not.toContain(SECRET);
    expect(body).toMatchObject({
      config: { client_secret_set: true, issuer: idp.issuer, enforced: false },
      domains: [{ domain, approved: false }],
      redirect_uri: REDIRECT,
      is_instance_owner: true,
    });
    const row = await ctx
      .db()
      .selectFrom("sso_configs")
      .selectAll()
      .where("team_id", "=", teamId)
      .executeTakeFirstOrThrow();
    expect(row.client_secret_ciphertext).not.toContain(SECRET);
    expect(decrypt(row.client_secret_ciphertext!, { aad: clientSecretAad(teamId) })).toBe(SECRET);
    expect(() => decrypt(row.client_secret_ciphertext!, { aad: clientSecretAad("team_other") })).toThrow();
    const got = await ssoGet(request("/api/team/sso", { cookie: ownerCookie }), noParams);
    expect(JSON.stringify(await jsonOf(got))).not.toContain(SECRET);
    const audit = await listAuditEvents(ctx.db(), { teamId });
    const update = audit.find((e) => e.action === "sso.config_update")!;
    expect(JSON.stringify(update.data)).not.toContain(SECRET);
  });

  it("refuses to enforce before a successful test sign-in, and an issuer on a private network that is not listed", async () => {
    const res = await put({ ...config(), enforced: true });
    expect(res.status).toBe(422);
    expect((await jsonOf(res)).errors).toHaveProperty("enforced");
    vi.stubEnv("BATON_SSO_ALLOWED_ISSUERS", "");
    const plain = await put(config());
    expect(plain.status).toBe(422);
    expect((await jsonOf(plain)).errors).toHaveProperty("issuer");
    vi.stubEnv("BATON_SSO_ALLOWED_ISSUERS", idp.issuer);
  });

  it("a test sign-in reports what the IdP said and signs nobody in", async () => {
    const res = await ssoTest(request("/api/team/sso/test", { method: "POST", cookie: ownerCookie }), noParams);
    expect(res.status).toBe(200);
    const { url } = (await jsonOf(res)) as { url: string };
    const callbackUrl = await signInAtIdp(url, "alice", REDIRECT);
    const back = await ssoCallback(request(callbackUrl.slice(ORIGIN.length)), noParams);
    expect(back.status).toBe(303);
    expect(back.headers.get("location")).toBe("/settings/sso?test=done");
    expect(back.headers.getSetCookie()).toEqual([]);
    const result = await jsonOf(
      await ssoTestResult(request("/api/team/sso/test-result", { cookie: ownerCookie }), noParams),
    );
    expect(result).toMatchObject({
      tested_at: expect.any(Number),
      last_test: {
        ok: true,
        email: `alice@${domain}`,
        role: "member",
        groups: ["baton-devs"],
        // The round trip works before the approval; the result says real sign-ins wait for it.
        code: "sso_domain_unapproved",
      },
    });
    expect(await findUserByEmail(ctx.db(), `alice@${domain}`)).toBeNull();
  });

  it("before the instance owner approves the domain, nobody signs in through it: no account, no link, no membership, and the refusal is audited", async () => {
    const db = ctx.db();
    // A new person: refused before an account exists.
    const alice = await ssoSignIn("alice");
    expect(errorOf(alice.location)).toBe("sso_domain_unapproved");
    expect(alice.res.headers.getSetCookie()).toEqual([]);
    expect(await findUserByEmail(db, `alice@${domain}`)).toBeNull();
    // An existing account with that address: not linked, not made a member.
    const erin = await createUser(db, { email: `erin@${domain}`, passwordHash: await hashPassword(PASSWORD) });
    expect(errorOf((await ssoSignIn("erin")).location)).toBe("sso_domain_unapproved");
    expect(await getMembership(db, teamId, erin.id)).toBeNull();
    const links = await db.selectFrom("sso_identities").select("id").where("user_id", "=", erin.id).execute();
    expect(links).toEqual([]);
    const failed = (await listAuditEvents(db, { teamId })).find((e) => e.action === "sso.sign_in_failed");
    expect(failed?.data).toMatchObject({ code: "sso_domain_unapproved" });
    expect(ssoMessage("sso_domain_unapproved")).toMatch(/instance owner/);
    // Nor does an unapproved claim steer the domain's people to the claiming team's IdP.
    const byEmail = await ssoStart(
      request(`/api/auth/sso/start?email=${encodeURIComponent(`alice@${domain}`)}`),
      noParams,
    );
    expect(errorOf(byEmail.headers.get("location")!)).toBe("sso_domain_unapproved");

    // Only the instance owner approves it.
    const member = await createUser(db, { email: `dave@${domain}`, passwordHash: await hashPassword(PASSWORD) });
    await addMember(db, { teamId, userId: member.id, role: "admin" });
    const memberCookie = (await sessionCookie(db, member.id)).cookie;
    const refused = await adminDomainsPost(
      request("/api/admin/sso-domains", { method: "POST", cookie: memberCookie, body: { domain } }),
      noParams,
    );
    expect(refused.status).toBe(403);
    expect((await adminDomainsGet(request("/api/admin/sso-domains", { cookie: memberCookie }), noParams)).status).toBe(
      403,
    );
    const pending = await jsonOf(
      await adminDomainsGet(request("/api/admin/sso-domains", { cookie: ownerCookie }), noParams),
    );
    expect(pending.domains).toEqual([
      expect.objectContaining({ domain, approved: false, team: expect.objectContaining({ slug }) }),
    ]);
    const approved = await adminDomainsPost(
      request("/api/admin/sso-domains", { method: "POST", cookie: ownerCookie, body: { domain } }),
      noParams,
    );
    expect(approved.status).toBe(200);
    expect((await listAuditEvents(db, { teamId })).some((e) => e.action === "sso.domain_approve")).toBe(true);
  });

  it("signs a new person in with just-in-time membership, their role from the group map, and a capped session", async () => {
    const { res, location, ms } = await ssoSignIn("alice");
    expect(res.status, location).toBe(303);
    expect(location).toBe("/sandboxes");
    console.log(`[sso] sign-in through the handlers and the IdP: ${ms.toFixed(0)} ms (${backend.name})`);
    const cookie = cookieOf(res);
    expect(res.headers.getSetCookie()[0]).toMatch(/Max-Age=28800; HttpOnly; SameSite=Lax/);
    const meRes = await me(request("/api/me", { cookie }), noParams);
    expect(meRes.status).toBe(200);
    const user = (await findUserByEmail(ctx.db(), `alice@${domain}`))!;
    expect(await getMembership(ctx.db(), teamId, user.id)).toMatchObject({ role: "member" });
    const identity = await ctx
      .db()
      .selectFrom("sso_identities")
      .selectAll()
      .where("user_id", "=", user.id)
      .executeTakeFirstOrThrow();
    expect(identity).toMatchObject({ issuer: idp.issuer, subject: "alice", team_id: teamId });
    const session = await ctx
      .db()
      .selectFrom("sessions")
      .select(["created_at", "expires_at"])
      .where("user_id", "=", user.id)
      .executeTakeFirstOrThrow();
    expect(Number(session.expires_at) - Number(session.created_at)).toBe(8 * 3_600_000);
    const audit = await listAuditEvents(ctx.db(), { teamId });
    expect(audit.find((e) => e.action === "sso.sign_in")).toMatchObject({
      userId: user.id,
      data: { jit: true, role: "member", subject: "alice" },
    });
  });

  it("a replayed state is refused", async () => {
    const { callbackUrl } = await ssoSignIn("alice");
    const again = await ssoCallback(request(callbackUrl.slice(ORIGIN.length)), noParams);
    expect(errorOf(again.headers.get("location")!)).toBe("invalid_state");
    expect(again.headers.getSetCookie()).toEqual([]);
  });

  it.each([
    ["a wrong audience", (c: Record<string, unknown>) => ({ ...c, aud: "someone-else" })],
    [
      "an expired ID token",
      (c: Record<string, unknown>) => ({
        ...c,
        iat: Math.floor(Date.now() / 1000) - 7200,
        exp: Math.floor(Date.now() / 1000) - 3600,
      }),
    ],
    ["a nonce mismatch", (c: Record<string, unknown>) => ({ ...c, nonce: "not-the-nonce" })],
    ["another issuer", (c: Record<string, unknown>) => ({ ...c, iss: "https://evil.example" })],
  ])("refuses %s (validly signed by the IdP)", async (_what, tamper) => {
    idp.tamper = tamper;
    try {
      const { res, location } = await ssoSignIn("alice");
      expect(errorOf(location)).toBe("token_rejected");
      expect(res.headers.getSetCookie()).toEqual([]);
    } finally {
      idp.tamper = null;
    }
    const failed = (await listAuditEvents(ctx.db(), { teamId })).find((e) => e.action === "sso.sign_in_failed");
    expect(failed?.data).toMatchObject({ code: "token_rejected" });
  });

  it("refuses a domain the team does not hold and an unverified email", async () => {
    expect(errorOf((await ssoSignIn("bob")).location)).toBe("domain_not_allowed");
    expect(await findUserByEmail(ctx.db(), "bob@elsewhere.test")).toBeNull();
    expect(errorOf((await ssoSignIn("carol")).location)).toBe("email_unverified");
  });

  it("a group change at the IdP promotes and demotes at the next sign-in, and a missing group claim means the default role", async () => {
    const alice = (await findUserByEmail(ctx.db(), `alice@${domain}`))!;
    idp.users.get("alice")!.groups = ["baton-devs", "baton-admins"];
    await ssoSignIn("alice");
    expect(await getMembership(ctx.db(), teamId, alice.id)).toMatchObject({ role: "admin" });
    idp.users.get("alice")!.groups = ["baton-devs"];
    await ssoSignIn("alice");
    expect(await getMembership(ctx.db(), teamId, alice.id)).toMatchObject({ role: "member" });
    const changes = (await listAuditEvents(ctx.db(), { teamId })).filter((e) => e.action === "member.role_change");
    expect(changes[0]?.data).toMatchObject({ before: { role: "admin" }, after: { role: "member" } });
    const { location } = await ssoSignIn("nogroups");
    expect(location).toBe("/sandboxes");
    const nog = (await findUserByEmail(ctx.db(), `nog@${domain}`))!;
    expect(await getMembership(ctx.db(), teamId, nog.id)).toMatchObject({ role: "viewer" });
  });

  it("the allowed-groups gate refuses a missing group claim and removes a member no longer in an allowed group", async () => {
    expect((await put({ ...config(), allowed_groups: ["baton-devs", "baton-admins"] })).status).toBe(200);
    expect(errorOf((await ssoSignIn("nogroups")).location)).toBe("missing_group_claim");
    const nog = (await findUserByEmail(ctx.db(), `nog@${domain}`))!;
    expect(await getMembership(ctx.db(), teamId, nog.id)).toBeNull();
    const alice = (await findUserByEmail(ctx.db(), `alice@${domain}`))!;
    idp.users.get("alice")!.groups = ["marketing"];
    expect(errorOf((await ssoSignIn("alice")).location)).toBe("group_not_allowed");
    expect(await getMembership(ctx.db(), teamId, alice.id)).toBeNull();
    idp.users.get("alice")!.groups = ["baton-devs"];
    expect((await ssoSignIn("alice")).location).toBe("/sandboxes");
    expect(await getMembership(ctx.db(), teamId, alice.id)).toMatchObject({ role: "member" });
  });

  it("once the domain is approved and SSO enforced, members must use SSO and the owner's password is the audited break-glass", async () => {
    const db = ctx.db();
    // Not yet enforced: the member's password still works.
    const before = await login(
      request("/api/auth/login", { method: "POST", body: { email: `dave@${domain}`, password: PASSWORD } }),
      noParams,
    );
    expect(before.status).toBe(200);
    expect((await put({ ...config(), enforced: true })).status).toBe(200);

    const denied = await login(
      request("/api/auth/login", { method: "POST", body: { email: `dave@${domain}`, password: PASSWORD } }),
      noParams,
    );
    expect(denied.status).toBe(403);
    expect(await jsonOf(denied)).toMatchObject({ code: "sso_required", detail: ssoMessage("sso_required") });
    const unknown = await login(
      request("/api/auth/login", { method: "POST", body: { email: `nobody@${domain}`, password: PASSWORD } }),
      noParams,
    );
    expect(await jsonOf(unknown)).toMatchObject({ code: "sso_required" });

    const owner = await login(
      request("/api/auth/login", { method: "POST", body: { email: ownerEmail, password: PASSWORD } }),
      noParams,
    );
    expect(owner.status).toBe(200);
    const audit = await listAuditEvents(db, { teamId });
    expect(audit.find((e) => e.action === "auth.break_glass")).toMatchObject({ data: { email: ownerEmail } });

    // With the domain approved, an existing account is linked to its (issuer, subject).
    expect((await ssoSignIn("erin")).location).toBe("/sandboxes");
    // SSO by email finds the team.
    expect(
      (await ssoSignIn("alice", `/api/auth/sso/start?email=${encodeURIComponent(`alice@${domain}`)}`)).location,
    ).toBe("/sandboxes");
  });

  it("with the IdP down, SSO says so clearly and the owner's password sign-in still works", async () => {
    await idp.close();
    const started = await ssoStart(request(`/api/auth/sso/start?team=${slug}`), noParams);
    expect(started.status).toBe(303);
    const location = new URL(started.headers.get("location")!, ORIGIN);
    expect(location.pathname).toBe("/login");
    expect(location.searchParams.get("sso_error")).toBe("idp_unreachable");
    expect(ssoMessage("idp_unreachable", { issuer: idp.issuer })).toBe(
      `${idp.issuer} did not answer; password sign-in still works for the owner.`,
    );
    const owner = await login(
      request("/api/auth/login", { method: "POST", body: { email: ownerEmail, password: PASSWORD } }),
      noParams,
    );
    expect(owner.status).toBe(200);
    const failed = (await listAuditEvents(ctx.db(), { teamId })).find((e) => e.action === "sso.sign_in_failed");
    expect(failed?.data).toMatchObject({ code: "idp_unreachable" });
  });

  it("removing SSO ends enforcement", async () => {
    const del = await ssoDelete(request("/api/team/sso", { method: "DELETE", cookie: ownerCookie }), noParams);
    expect(del.status).toBe(204);
    const dave = await login(
      request("/api/auth/login", { method: "POST", body: { email: `dave@${domain}`, password: PASSWORD } }),
      noParams,
    );
    expect(dave.status).toBe(200);
  });
});

describe("the SSO redirect URI", () => {
  it("comes from the request's Host (the name the browser used), not from req.url's origin, for the page, the start and the token request alike", () => {
    // Behind the console server, req.url carries the address Next listens on; the browser (and the
    // URI registered at the IdP) uses the Host it typed.
    const headers = new Headers({ host: "127.0.0.1:40123" });
    expect(redirectUri(headers)).toBe("http://127.0.0.1:40123/api/auth/sso/callback");
    headers.set("x-forwarded-proto", "https");
    headers.set("host", "baton.example.com");
    expect(redirectUri(headers)).toBe("https://baton.example.com/api/auth/sso/callback");
  });
});
