import "server-only";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { POST as mcpPost } from "../../app/api/mcp/route";
import { GET as ssoCallback } from "../../app/api/auth/sso/callback/route";
import { GET as ssoStart } from "../../app/api/auth/sso/start/route";
import { PUT as ssoPut } from "../../app/api/team/sso/route";
import { GET as listTokens, POST as createToken } from "../../app/api/tokens/route";
import { GET as listSandboxes } from "../../app/api/v1/sandboxes/route";
import { resolveBearer } from "../../lib/server/api-tokens/bearer";
import { resolveSignedLink } from "../../lib/server/api-tokens/signed-link";
import { hashPassword } from "../../lib/server/crypto";
import { setSetting } from "../../lib/server/db/settings";
import { approveSsoDomain, INSTANCE_OWNER_KEY, linkSsoIdentity } from "../../lib/server/db/sso";
import { addMember, createTeamWithOwner } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { createUser, findUserByEmail } from "../../lib/server/db/users";
import { AppError } from "../../lib/server/errors";
import { fileLinkQuery } from "../../lib/server/file-link-signature";
import { authorizeRelay } from "../../lib/server/pty-relay";
import { forgetRemembered } from "../../lib/server/session-cache";
import { connectLocalEngine } from "../../lib/server/tokens";
import type { ApiTokensView, CreatedApiTokenDto } from "../../lib/validations/api-tokens";
import { signInAtIdp, startTestIdp, type TestIdp } from "../helpers/oidc-idp";
import { useLocalEngine } from "../console/engine-harness";
import { jsonOf, noParams, ORIGIN, PASSWORD, request, sessionCookie, uniq, useConsoleDb } from "../console/helpers";

// Issue 21/23: the API tokens of a team's SSO people last no longer than their SSO session would
// (lib/server/api-tokens/sso-bound.ts). Someone removed at the IdP cannot sign in again, so their
// browser session ends after the team's session maximum; their tokens must end then too, and a new
// SSO sign-in (which proves the membership again) renews them. The owner (break-glass) and people
// outside the team's SSO are not affected.

const REDIRECT = `${ORIGIN}/api/auth/sso/callback`;
const SECRET = "idp-client-secret-0123456789";
const MAX_HOURS = 8;
const HOUR = 3_600_000;

describe.each(testBackends)("API tokens of SSO people follow the SSO session maximum ($name)", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));
  let idp: TestIdp;
  let ownerId = "";
  let ownerCookie = "";
  let slug = "";
  let teamId = "";
  let domain = "";

  async function ssoSignIn(idpUser: string): Promise<string> {
    const started = await ssoStart(request(`/api/auth/sso/start?team=${slug}`), noParams);
    const callbackUrl = await signInAtIdp(started.headers.get("location")!, idpUser, REDIRECT);
    const res = await ssoCallback(request(callbackUrl.slice(ORIGIN.length)), noParams);
    expect(res.headers.get("location")).toBe("/sandboxes");
    return res.headers
      .getSetCookie()
      .map((c) => c.split(";", 1)[0])
      .join("; ");
  }
  async function madeToken(cookie: string): Promise<CreatedApiTokenDto> {
    const res = await createToken(
      request("/api/tokens", { method: "POST", cookie, body: { name: "ci", scope: "read" } }),
      noParams,
    );
    expect(res.status).toBe(201);
    return (await res.json()) as CreatedApiTokenDto;
  }
  const tokenOf = async (cookie: string) => (await madeToken(cookie)).token;
  /** What a download link the token signed answers: the principal's user id, or the refusal's code. */
  async function signedLinkBy(tokenId: string): Promise<string> {
    const claims = {
      method: "GET",
      team: slug,
      sandboxId: "sb1",
      path: "/a.txt",
      exp: Math.floor(Date.now() / 1000) + 300,
      tokenId,
    } as const;
    const req = request(`/api/v1/sandboxes/sb1/files/raw?${fileLinkQuery(claims)}`);
    return resolveSignedLink(ctx.db(), req, { sandboxId: "sb1", perm: "sandboxes.read", ip: null }).then(
      (p) => p.current.user.id,
      (e: AppError) => e.code,
    );
  }
  const v1List = (token: string) =>
    listSandboxes(request("/api/v1/sandboxes", { headers: { authorization: `Bearer ${token}` } }), noParams);
  /** Sets every SSO identity of the user in the team to have last signed in at `at`. */
  async function lastSignIn(userId: string, at: number): Promise<void> {
    await ctx.db().updateTable("sso_identities").set({ last_sign_in_at: at }).where("user_id", "=", userId).execute();
  }
  async function memberWithPassword(email: string): Promise<{ id: string; cookie: string }> {
    const user = await createUser(ctx.db(), { email, name: "Pat", passwordHash: await hashPassword(PASSWORD) });
    await addMember(ctx.db(), { teamId, userId: user.id, role: "member" });
    await connectLocalEngine(user.id, { teamId });
    return { id: user.id, cookie: (await sessionCookie(ctx.db(), user.id)).cookie };
  }
  async function ssoHoursShown(cookie: string): Promise<number | null> {
    const view = (await (await listTokens(request("/api/tokens", { cookie }), noParams)).json()) as ApiTokensView;
    return view.sso_session_max_hours;
  }

  beforeAll(async () => {
    domain = `${uniq("sso-tok")}.test`;
    idp = await startTestIdp({
      clients: [{ client_id: "baton", client_secret: SECRET, redirect_uris: [REDIRECT] }],
      users: {
        dana: { email: `dana@${domain}`, email_verified: true },
        erin: { email: `erin@${domain}`, email_verified: true },
      },
    });
    vi.stubEnv("BATON_SSO_ALLOWED_ISSUERS", idp.issuer);
    const db = ctx.db();
    const owner = await createUser(db, {
      email: `root@${domain}`,
      name: "Root",
      passwordHash: await hashPassword(PASSWORD),
    });
    ownerId = owner.id;
    slug = uniq("sso-tok");
    teamId = (await createTeamWithOwner(db, { name: "Acme", slug, ownerId })).team.id;
    await setSetting(db, INSTANCE_OWNER_KEY, ownerId);
    await connectLocalEngine(ownerId, { teamId });
    ownerCookie = (await sessionCookie(db, ownerId)).cookie;
    const saved = await ssoPut(
      request("/api/team/sso", {
        method: "PUT",
        cookie: ownerCookie,
        body: {
          issuer: idp.issuer,
          client_id: "baton",
          client_secret: SECRET,
          domains: [domain],
          default_role: "member",
          group_claim: null,
          group_role_map: [],
          allowed_groups: [],
          group_sync: false,
          session_max_hours: MAX_HOURS,
        },
      }),
      noParams,
    );
    expect(saved.status).toBe(200);
    await approveSsoDomain(db, domain, ownerId);
    // Enforced (which the settings page allows only after a test sign-in): set in the database.
    await db.updateTable("sso_configs").set({ enforced: 1 }).where("team_id", "=", teamId).execute();
  }, 60_000);
  afterAll(async () => {
    await idp.close();
  });

  it("a member's token works within the deadline, is refused past it, and a new SSO sign-in renews it", async () => {
    const cookie = await ssoSignIn("dana");
    const dana = (await findUserByEmail(ctx.db(), `dana@${domain}`))!;
    await connectLocalEngine(dana.id, { teamId });
    const { token, api_token } = await madeToken(cookie);
    expect((await v1List(token)).status).toBe(200);
    expect(await signedLinkBy(api_token.id)).toBe(dana.id);

    // Still inside: signed in 7 hours ago.
    await lastSignIn(dana.id, Date.now() - (MAX_HOURS - 1) * HOUR);
    forgetRemembered(); // what SESSION_CACHE_TTL_MS does by itself
    expect((await v1List(token)).status).toBe(200);

    // The IdP removed her: no sign-in for longer than the session maximum.
    await lastSignIn(dana.id, Date.now() - (MAX_HOURS + 1) * HOUR);
    forgetRemembered();
    const refused = await v1List(token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    // The v1 contract's code for a refused credential, with the reason (the SDK raises its auth error).
    const body = await jsonOf(refused);
    expect(body).toMatchObject({ code: "unauthorized", reason: "sso_reauth_required" });
    expect(body.detail).toContain("Sign in to Baton through SSO again");
    expect(body.detail).toContain(`${MAX_HOURS} hours`);

    // The same refusal on the MCP endpoint (Baton's code) and the terminal relay (the contract's).
    const mcp = await mcpPost(
      request("/api/mcp", {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, accept: "application/json, text/event-stream" },
        body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      }),
      noParams,
    );
    expect(mcp.status).toBe(401);
    expect(await jsonOf(mcp)).toMatchObject({ code: "sso_reauth_required" });
    expect(
      await authorizeRelay({ host: "baton.test", authorization: `Bearer ${token}` }, "/api/v1/sandboxes/sb1/pty/p1/ws"),
    ).toMatchObject({ ok: false, status: 401, code: "unauthorized", reason: "sso_reauth_required" });
    // A file link the token signed is only as good as the token.
    expect(await signedLinkBy(api_token.id)).toBe("link_revoked");

    // Signing in through the IdP again proves the membership again: the same token works at once.
    await ssoSignIn("dana");
    expect((await v1List(token)).status).toBe(200);
    expect(await signedLinkBy(api_token.id)).toBe(dana.id);
    // Settings → API tokens says so when a token is made.
    expect(await ssoHoursShown(cookie)).toBe(MAX_HOURS);
  });

  it("refuses the tokens of someone in an enforced domain who never signed in through SSO", async () => {
    const pat = await memberWithPassword(`pat@${domain}`);
    const token = await tokenOf(pat.cookie);
    const refused = await v1List(token);
    expect(refused.status).toBe(401);
    const body = await jsonOf(refused);
    expect(body).toMatchObject({ code: "unauthorized", reason: "sso_reauth_required" });
    expect(body.detail).toContain("not signed in to it through SSO yet");
    expect(await ssoHoursShown(pat.cookie)).toBe(MAX_HOURS);
  });

  it("leaves the owner's tokens (break-glass) and a password member outside the SSO domains alone", async () => {
    // The owner has an SSO identity too, signed in long ago: still no deadline for the owner.
    await linkSsoIdentity(ctx.db(), {
      issuer: idp.issuer,
      subject: uniq("root-sub"),
      userId: ownerId,
      teamId,
      email: `root@${domain}`,
      now: Date.now() - 30 * 24 * HOUR,
    });
    forgetRemembered();
    expect(await ssoHoursShown(ownerCookie)).toBeNull();
    expect((await v1List(await tokenOf(ownerCookie))).status).toBe(200);

    const outsider = await memberWithPassword(`${uniq("sam")}@example.com`);
    expect(await ssoHoursShown(outsider.cookie)).toBeNull();
    expect((await v1List(await tokenOf(outsider.cookie))).status).toBe(200);
  });

  it("the in-process memory of a resolved token does not outlive its SSO deadline", async () => {
    const cookie = await ssoSignIn("erin");
    const erin = (await findUserByEmail(ctx.db(), `erin@${domain}`))!;
    const token = await tokenOf(cookie);
    const req = () => request("/api/v1/sandboxes", { headers: { authorization: `Bearer ${token}` } });
    const t = Date.now();
    // The deadline is half a second after t: well inside the memory's usual 2 seconds.
    await lastSignIn(erin.id, t + 500 - MAX_HOURS * HOUR);
    forgetRemembered();
    expect((await resolveBearer(ctx.db(), req(), token, null, { now: t })).current.user.id).toBe(erin.id);
    const late = await resolveBearer(ctx.db(), req(), token, null, { now: t + 600 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(AppError);
    expect(late).toMatchObject({ code: "sso_reauth_required", status: 401 });
    // A sign-in at t + 700 is seen at once, not when the memory would have expired.
    await lastSignIn(erin.id, t + 700);
    expect((await resolveBearer(ctx.db(), req(), token, null, { now: t + 800 })).current.user.id).toBe(erin.id);
  });
});
