import "server-only";
import { describe, expect, it } from "vitest";
import { DELETE as revokeRoute } from "../../app/api/tokens/[id]/route";
import { GET as listRoute, POST as createRoute } from "../../app/api/tokens/route";
import { GET as getCaps } from "../../app/api/usage/caps/route";
import { GET as getSandbox } from "../../app/api/v1/sandboxes/[id]/route";
import { GET as listSandboxes, POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { changeMemberRole, disableUser, removeTeamMember } from "../../lib/server/access";
import { LAST_USED_INTERVAL_MS, TOKEN_FAILURE_LIMIT } from "../../lib/server/api-tokens/bearer";
import { newApiToken } from "../../lib/server/api-tokens/format";
import { findApiTokenByHash, touchApiToken } from "../../lib/server/db/api-tokens";
import { listAuditEvents } from "../../lib/server/db/audit";
import { sha256 } from "../../lib/server/crypto";
import { addMember, getTeam } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { disableMember } from "../../lib/server/members";
import type { Role } from "../../lib/server/rbac";
import { CLIENT_IP_HEADER } from "../../lib/server/request-info";
import { connectLocalEngine } from "../../lib/server/tokens";
import type { ApiTokensView, CreatedApiTokenDto } from "../../lib/validations/api-tokens";
import { useLocalEngine } from "../console/engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, useConsoleDb } from "../console/helpers";

// Personal API tokens (issue 23) end to end through the real route handlers and a real engine:
// made and listed over the cookie, used as `Authorization: Bearer` on /api/v1 through route(),
// narrowed by their scope, bound to their team, revoked by hand and by Baton when the owner's
// access changes, audited.

describe.each(testBackends)("personal API tokens on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  async function member(role: Role, teamId?: string) {
    const made = await makeUser(ctx.db(), teamId ? null : role);
    const team = teamId ?? made.teamId!;
    if (teamId) await addMember(ctx.db(), { teamId, userId: made.user.id, role });
    await connectLocalEngine(made.user.id, { teamId: team });
    const { cookie } = await sessionCookie(ctx.db(), made.user.id);
    return { user: made.user, teamId: team, cookie };
  }

  async function makeToken(
    cookie: string,
    body: { name: string; scope: "read" | "write"; expires_in_days?: number | null },
  ): Promise<Response> {
    return createRoute(request("/api/tokens", { method: "POST", cookie, body }), noParams);
  }

  async function tokenFor(cookie: string, scope: "read" | "write" = "write", name = "ci"): Promise<CreatedApiTokenDto> {
    const res = await makeToken(cookie, { name, scope });
    expect(res.status).toBe(201);
    return (await res.json()) as CreatedApiTokenDto;
  }

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const v1 = (
    path: string,
    token: string,
    init: { method?: string; body?: object; headers?: Record<string, string> } = {},
  ) => request(path, { method: init.method, body: init.body, headers: { ...bearer(token), ...init.headers } });

  it("makes a token shown once, lists it without the secret, and audits it", async () => {
    const { teamId, cookie } = await member("member");
    const created = await tokenFor(cookie, "write", "deploy bot");
    expect(created.token).toMatch(/^bat_[0-9A-Za-z]{38}$/);
    expect(created.api_token).toMatchObject({ name: "deploy bot", scope: "write", mine: true, last_used_at: null });
    const days = (Date.parse(created.api_token.expires_at!) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThanOrEqual(90);
    // Only its hash is stored.
    expect(await findApiTokenByHash(ctx.db(), sha256(created.token))).toMatchObject({ id: created.api_token.id });
    const list = (await (await listRoute(request("/api/tokens", { cookie }), noParams)).json()) as ApiTokensView;
    expect(list.tokens.map((t) => t.id)).toEqual([created.api_token.id]);
    expect(JSON.stringify(list)).not.toContain(created.token);
    expect(list).toMatchObject({ manages_all: false, scopes: ["read", "write"], may_never_expire: false });
    const [event] = await listAuditEvents(ctx.db(), { teamId, limit: 1 });
    expect(event).toMatchObject({
      action: "api_token.create",
      targetType: "api_token",
      targetId: created.api_token.id,
      credential: "session",
    });
    expect(JSON.stringify(event)).not.toContain(created.token);
  });

  it("lets the scope only narrow the role, and 'never' only for admins", async () => {
    const viewer = await member("viewer");
    const write = await makeToken(viewer.cookie, { name: "x", scope: "write" });
    expect(write.status).toBe(403);
    expect(await makeToken(viewer.cookie, { name: "x", scope: "read" })).toHaveProperty("status", 201);
    const m = await member("member");
    expect((await makeToken(m.cookie, { name: "x", scope: "read", expires_in_days: null })).status).toBe(403);
    const bad = await makeToken(m.cookie, { name: "x", scope: "read", expires_in_days: 12 as never });
    expect(bad.status).toBe(422);
    const admin = await member("admin", m.teamId);
    const forever = await makeToken(admin.cookie, { name: "forever", scope: "read", expires_in_days: null });
    expect(forever.status).toBe(201);
    expect(((await forever.json()) as CreatedApiTokenDto).api_token.expires_at).toBeNull();
  });

  it("works as Bearer on /api/v1 without a cookie: creates a real sandbox, audited with the token", async () => {
    const { teamId, cookie } = await member("owner");
    const { token, api_token } = await tokenFor(cookie, "write", "agent");
    // A foreign Origin does not matter: no cookie is read, so there is nothing to forge.
    const res = await createSandbox(
      v1("/api/v1/sandboxes", token, {
        method: "POST",
        body: { template: "python-3.12" },
        headers: { origin: "https://elsewhere.example", "sec-fetch-site": "cross-site" },
      }),
      noParams,
    );
    expect(res.status).toBe(201);
    const sandbox = (await res.json()) as { id: string };
    const got = await getSandbox(v1(`/api/v1/sandboxes/${sandbox.id}`, token), {
      params: Promise.resolve({ id: sandbox.id }),
    });
    expect(got.status).toBe(200);
    const events = await listAuditEvents(ctx.db(), { teamId, limit: 10 });
    expect(events.find((e) => e.action === "sandbox.create")).toMatchObject({
      credential: `token:agent (${api_token.id})`,
      targetId: sandbox.id,
    });
    expect(events.filter((e) => e.action === "api_token.first_use")).toHaveLength(1);
    const row = await findApiTokenByHash(ctx.db(), sha256(token));
    expect(row?.lastUsedAt).not.toBeNull();
    expect(row?.lastUsedIp).toBe("192.0.2.10");
  });

  it("a read token is a viewer, a write token never more than a member", async () => {
    const { cookie } = await member("owner");
    const read = await tokenFor(cookie, "read");
    const list = await listSandboxes(v1("/api/v1/sandboxes", read.token), noParams);
    expect(list.status).toBe(200);
    const create = await createSandbox(
      v1("/api/v1/sandboxes", read.token, { method: "POST", body: { template: "python-3.12" } }),
      noParams,
    );
    expect(create.status).toBe(403);
    expect(await jsonOf(create)).toMatchObject({ code: "forbidden", detail: expect.stringContaining("read only") });
    // The console's own routes take no token at all, the owner's billing view included.
    const write = await tokenFor(cookie, "write");
    const caps = await getCaps(request("/api/usage/caps", { headers: bearer(write.token) }), noParams);
    expect(caps.status).toBe(401);
    expect(await jsonOf(caps)).toMatchObject({ detail: expect.stringContaining("only by /api/v1") });
    // A token cannot make a token.
    const mint = await createRoute(
      request("/api/tokens", { method: "POST", headers: bearer(write.token), body: { name: "y", scope: "read" } }),
      noParams,
    );
    expect(mint.status).toBe(401);
  });

  it("is fixed to its team: naming another team is refused", async () => {
    const a = await member("owner");
    const b = await member("owner");
    await addMember(ctx.db(), { teamId: b.teamId, userId: a.user.id, role: "owner" });
    const { token } = await tokenFor(a.cookie);
    const teamB = (await getTeam(ctx.db(), b.teamId))!;
    const teamA = (await getTeam(ctx.db(), a.teamId))!;
    const other = await listSandboxes(
      v1("/api/v1/sandboxes", token, { headers: { "x-baton-team": teamB.slug } }),
      noParams,
    );
    expect(other.status).toBe(403);
    expect(await jsonOf(other)).toMatchObject({ code: "token_team_mismatch" });
    const same = await listSandboxes(
      v1("/api/v1/sandboxes", token, { headers: { "x-baton-team": teamA.slug } }),
      noParams,
    );
    expect(same.status).toBe(200);
  });

  it("refuses bad, revoked and expired tokens with 401 and WWW-Authenticate, and limits failures per address", async () => {
    const { cookie } = await member("member");
    const { token, api_token } = await tokenFor(cookie);
    const expectInvalid = async (t: string) => {
      const res = await listSandboxes(
        v1("/api/v1/sandboxes", t, { headers: { [CLIENT_IP_HEADER]: "198.51.100.8" } }),
        noParams,
      );
      expect(res.status, t).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="baton", error="invalid_token"');
      expect(await jsonOf(res)).toMatchObject({
        code: "unauthorized",
        reason: "invalid_token",
        detail: expect.any(String),
      });
    };
    await expectInvalid(newApiToken().token); // well-formed, unknown
    await expectInvalid("bat_nope");
    // Expired: moved into the past.
    const expired = await tokenFor(cookie);
    await ctx
      .db()
      .updateTable("api_tokens")
      .set({ expires_at: Date.now() - 1 })
      .where("id", "=", expired.api_token.id)
      .execute();
    await expectInvalid(expired.token);
    // Used once (so this process remembers it for a moment), then revoked by hand (a member, their
    // own): refused on the very next request. A second revocation changes nothing.
    expect((await listSandboxes(v1("/api/v1/sandboxes", token), noParams)).status).toBe(200);
    const del = await revokeRoute(request(`/api/tokens/${api_token.id}`, { method: "DELETE", cookie }), {
      params: Promise.resolve({ id: api_token.id }),
    });
    expect(await jsonOf(del)).toMatchObject({ revoked: true, already: false });
    await expectInvalid(token);
    const again = await revokeRoute(request(`/api/tokens/${api_token.id}`, { method: "DELETE", cookie }), {
      params: Promise.resolve({ id: api_token.id }),
    });
    expect(await jsonOf(again)).toMatchObject({ already: true });
    // No session header at all on v1 names the scheme too.
    const none = await listSandboxes(request("/api/v1/sandboxes"), noParams);
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="baton"');
    // Failures from one address: past the limit, 429 even for a good token's look-alikes.
    const ip = { [CLIENT_IP_HEADER]: "198.51.100.7" };
    await ctx.db().deleteFrom("login_attempts").where("key", "like", "api-token:%").execute();
    const statuses: number[] = [];
    for (let i = 0; i <= TOKEN_FAILURE_LIMIT.limit; i++) {
      const res = await listSandboxes(
        request("/api/v1/sandboxes", { headers: { ...bearer(newApiToken().token), ...ip } }),
        noParams,
      );
      statuses.push(res.status);
    }
    expect(statuses.slice(0, -1).every((s) => s === 401)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    // Another address is not held back by this one's failures.
    expect((await listSandboxes(v1("/api/v1/sandboxes", (await tokenFor(cookie)).token), noParams)).status).toBe(200);
  });

  it("writes last_used at most once a minute, and its first use once", async () => {
    const { cookie } = await member("member");
    const { token } = await tokenFor(cookie);
    const row = (await findApiTokenByHash(ctx.db(), sha256(token)))!;
    const t0 = Date.now();
    const at = (now: number, lastUsedAt: Date | null) =>
      touchApiToken(ctx.db(), { id: row.id, lastUsedAt, ip: "203.0.113.1", now, minIntervalMs: LAST_USED_INTERVAL_MS });
    expect(await at(t0, null)).toBe("first");
    expect(await at(t0, null)).toBe("skipped"); // a concurrent first use: only one wins
    expect(await at(t0 + 30_000, new Date(t0))).toBe("skipped"); // no write at all within the minute
    expect(await at(t0 + LAST_USED_INTERVAL_MS, new Date(t0))).toBe("written");
    expect(await at(t0 + LAST_USED_INTERVAL_MS, new Date(t0))).toBe("skipped");
    expect((await findApiTokenByHash(ctx.db(), sha256(token)))!.lastUsedAt?.getTime()).toBe(t0 + LAST_USED_INTERVAL_MS);
  });

  it("admins see and revoke every token of the team, members only their own", async () => {
    const admin = await member("admin");
    const m = await member("member", admin.teamId);
    const other = await member("member", admin.teamId);
    const mine = await tokenFor(m.cookie, "read", "mine");
    const theirs = await tokenFor(other.cookie, "read", "theirs");
    const seen = (await (
      await listRoute(request("/api/tokens", { cookie: admin.cookie }), noParams)
    ).json()) as ApiTokensView;
    expect(seen.manages_all).toBe(true);
    expect(seen.tokens.map((t) => [t.name, t.owner.id])).toEqual(
      expect.arrayContaining([
        ["mine", m.user.id],
        ["theirs", other.user.id],
      ]),
    );
    const cross = await revokeRoute(
      request(`/api/tokens/${theirs.api_token.id}`, { method: "DELETE", cookie: m.cookie }),
      {
        params: Promise.resolve({ id: theirs.api_token.id }),
      },
    );
    expect(cross.status).toBe(404);
    const byAdmin = await revokeRoute(
      request(`/api/tokens/${mine.api_token.id}`, { method: "DELETE", cookie: admin.cookie }),
      { params: Promise.resolve({ id: mine.api_token.id }) },
    );
    expect(byAdmin.status).toBe(200);
    expect((await listSandboxes(v1("/api/v1/sandboxes", mine.token), noParams)).status).toBe(401);
    expect((await listSandboxes(v1("/api/v1/sandboxes", theirs.token), noParams)).status).toBe(200);
  });

  it("is revoked at once when its owner leaves, is removed, disabled, or loses the role it needs", async () => {
    const owner = await member("owner");
    const works = async (t: string) => (await listSandboxes(v1("/api/v1/sandboxes", t), noParams)).status === 200;
    const revokedReason = async (t: string) => (await findApiTokenByHash(ctx.db(), sha256(t)))?.revokedReason ?? null;

    const leaver = await member("member", owner.teamId);
    const left = await tokenFor(leaver.cookie);
    expect(await works(left.token)).toBe(true);
    await removeTeamMember({ teamId: owner.teamId, userId: leaver.user.id, left: true });
    expect(await works(left.token)).toBe(false);
    expect(await revokedReason(left.token)).toBe("member_left");

    const removed = await member("member", owner.teamId);
    const rt = await tokenFor(removed.cookie);
    await removeTeamMember({ teamId: owner.teamId, userId: removed.user.id });
    expect(await revokedReason(rt.token)).toBe("member_removed");

    const disabledHere = await member("member", owner.teamId);
    const dt = await tokenFor(disabledHere.cookie);
    await disableMember(ctx.db(), { userId: owner.user.id, teamId: owner.teamId, role: "owner" }, disabledHere.user.id);
    expect(await works(dt.token)).toBe(false);
    expect(await revokedReason(dt.token)).toBe("member_disabled");

    const account = await member("member", owner.teamId);
    const at = await tokenFor(account.cookie);
    await disableUser(account.user.id);
    expect(await revokedReason(at.token)).toBe("account_disabled");

    // Demoted to viewer: the write token goes, the read token stays (and still reads).
    const demoted = await member("admin", owner.teamId);
    const w = await tokenFor(demoted.cookie, "write");
    const r = await tokenFor(demoted.cookie, "read");
    const forever = (await (
      await makeToken(demoted.cookie, { name: "f", scope: "read", expires_in_days: null })
    ).json()) as CreatedApiTokenDto;
    await changeMemberRole({ teamId: owner.teamId, userId: demoted.user.id, role: "member" });
    expect(await revokedReason(forever.token)).toBe("role_changed"); // never-expiring: admins only
    expect(await works(w.token)).toBe(true);
    await changeMemberRole({ teamId: owner.teamId, userId: demoted.user.id, role: "viewer" });
    expect(await revokedReason(w.token)).toBe("role_changed");
    expect(await works(w.token)).toBe(false);
    expect(await works(r.token)).toBe(true);

    const revocations = (await listAuditEvents(ctx.db(), { teamId: owner.teamId, limit: 100 })).filter(
      (e) => e.action === "api_token.revoke",
    );
    expect(revocations.map((e) => (e.data as { reason: string }).reason).sort()).toEqual(
      ["account_disabled", "member_disabled", "member_left", "member_removed", "role_changed", "role_changed"].sort(),
    );
  });
});
