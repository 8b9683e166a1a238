import "server-only";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GET as ssoCallback } from "../../app/api/auth/sso/callback/route";
import { GET as ssoStart } from "../../app/api/auth/sso/start/route";
import { POST as localEngine } from "../../app/api/connections/local-engine/route";
import { PUT as ssoPut } from "../../app/api/team/sso/route";
import { decrypt } from "../../lib/server/crypto";
import { getActiveConnection, getConnectionSecret } from "../../lib/server/db/connections";
import { setSetting } from "../../lib/server/db/settings";
import { approveSsoDomain, INSTANCE_OWNER_KEY } from "../../lib/server/db/sso";
import { createTeamWithOwner, getMembership } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { createUser, findUserByEmail } from "../../lib/server/db/users";
import { hashPassword } from "../../lib/server/crypto";
import { signInAtIdp, startTestIdp, type TestIdp } from "../helpers/oidc-idp";
import { useLocalEngine } from "./engine-harness";
import { noParams, ORIGIN, PASSWORD, request, sessionCookie, uniq, useConsoleDb } from "./helpers";

// A demotion or removal decided at the IdP (group sync, the allowed-groups gate) takes the
// person's local-engine tokens away exactly like one made on /team (lib/server/access.ts): the
// write token they held stops working on the engine at once, even a copy taken out before.

const REDIRECT = `${ORIGIN}/api/auth/sso/callback`;
const SECRET = "idp-client-secret-0123456789";

describe.each(testBackends)("SSO demotion and removal revoke engine tokens ($name)", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));
  let idp: TestIdp;
  let ownerCookie = "";
  let slug = "";
  let teamId = "";
  let domain = "";

  const config = (over: Record<string, unknown> = {}) => ({
    issuer: idp.issuer,
    client_id: "baton",
    client_secret: SECRET,
    domains: [domain],
    default_role: "viewer",
    group_claim: "groups",
    group_role_map: [{ group: "baton-devs", role: "member" }],
    allowed_groups: [],
    group_sync: true,
    session_max_hours: 8,
    ...over,
  });
  const put = async (body: Record<string, unknown>) =>
    ssoPut(request("/api/team/sso", { method: "PUT", cookie: ownerCookie, body }), noParams);

  /** The whole SSO sign-in of `userId`; returns the callback's redirect and the session cookie. */
  async function ssoSignIn(userId: string) {
    const started = await ssoStart(request(`/api/auth/sso/start?team=${slug}`), noParams);
    const callbackUrl = await signInAtIdp(started.headers.get("location")!, userId, REDIRECT);
    const res = await ssoCallback(request(callbackUrl.slice(ORIGIN.length)), noParams);
    const cookie = res.headers
      .getSetCookie()
      .map((c) => c.split(";", 1)[0])
      .join("; ");
    return { location: res.headers.get("location") ?? "", cookie };
  }
  async function engineTokenOf(userId: string): Promise<string> {
    const conn = (await getActiveConnection(ctx.db(), userId))!;
    const secret = (await getConnectionSecret(ctx.db(), userId, conn.id))!;
    return decrypt(secret.ciphertext, { aad: secret.aad });
  }
  /** What the engine answers a write (create) with this token: 401 once it is revoked. */
  async function engineWrite(token: string): Promise<number> {
    const res = await fetch(`${ctx.engine().url}/sandboxes`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ template: "no-such-template-for-this-probe" }),
    });
    await res.body?.cancel();
    return res.status;
  }
  async function engineRead(token: string): Promise<number> {
    const res = await fetch(`${ctx.engine().url}/sandboxes`, { headers: { authorization: `Bearer ${token}` } });
    await res.body?.cancel();
    return res.status;
  }

  beforeAll(async () => {
    domain = `${uniq("sso-rev")}.test`;
    idp = await startTestIdp({
      clients: [{ client_id: "baton", client_secret: SECRET, redirect_uris: [REDIRECT] }],
      users: { dana: { email: `dana@${domain}`, email_verified: true, groups: ["baton-devs"] } },
    });
    vi.stubEnv("BATON_SSO_ALLOWED_ISSUERS", idp.issuer);
    const db = ctx.db();
    const owner = await createUser(db, {
      email: `root@${domain}`,
      name: "Root",
      passwordHash: await hashPassword(PASSWORD),
    });
    slug = uniq("sso-rev");
    teamId = (await createTeamWithOwner(db, { name: "Acme", slug, ownerId: owner.id })).team.id;
    await setSetting(db, INSTANCE_OWNER_KEY, owner.id);
    ownerCookie = (await sessionCookie(db, owner.id)).cookie;
    expect((await put(config())).status).toBe(200);
    // SSO sign-ins go through only on a domain the instance owner approved.
    await approveSsoDomain(db, domain, owner.id);
  }, 60_000);
  afterAll(async () => {
    await idp.close();
  });

  it("group sync demoting to viewer revokes the write engine token; the gate removing them revokes the rest", async () => {
    const first = await ssoSignIn("dana");
    expect(first.location).toBe("/sandboxes");
    const dana = (await findUserByEmail(ctx.db(), `dana@${domain}`))!;
    expect(await getMembership(ctx.db(), teamId, dana.id)).toMatchObject({ role: "member" });
    const connected = await localEngine(
      request("/api/connections/local-engine", { method: "POST", cookie: first.cookie }),
      noParams,
    );
    expect(connected.status).toBe(201);
    const writeToken = await engineTokenOf(dana.id);
    expect(await engineRead(writeToken)).toBe(200);
    expect(await engineWrite(writeToken)).not.toBe(401);

    // The IdP takes dana out of baton-devs: the next sign-in makes her a viewer.
    idp.users.get("dana")!.groups = ["marketing"];
    expect((await ssoSignIn("dana")).location).toBe("/sandboxes");
    expect(await getMembership(ctx.db(), teamId, dana.id)).toMatchObject({ role: "viewer" });
    expect(await engineRead(writeToken)).toBe(401);
    expect(await engineWrite(writeToken)).toBe(401);
    const readToken = await engineTokenOf(dana.id);
    expect(readToken).not.toBe(writeToken);
    expect(await engineRead(readToken)).toBe(200);

    // The team then allows only baton-devs: her next sign-in removes her, and her engine token with it.
    expect((await put(config({ allowed_groups: ["baton-devs"] }))).status).toBe(200);
    const refused = await ssoSignIn("dana");
    expect(new URL(refused.location, ORIGIN).searchParams.get("sso_error")).toBe("group_not_allowed");
    expect(await getMembership(ctx.db(), teamId, dana.id)).toBeNull();
    expect(await engineRead(readToken)).toBe(401);
    expect(await getActiveConnection(ctx.db(), dana.id)).toBeNull();
  });
});
