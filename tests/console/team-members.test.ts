import "server-only";
import { describe, expect, it } from "vitest";
import { POST as localEngine } from "../../app/api/connections/local-engine/route";
import { GET as getMe } from "../../app/api/me/route";
import { POST as leave } from "../../app/api/team/leave/route";
import { POST as disable } from "../../app/api/team/members/[userId]/disable/route";
import { POST as enable } from "../../app/api/team/members/[userId]/enable/route";
import { DELETE as removeMember, PATCH as changeRole } from "../../app/api/team/members/[userId]/route";
import { DELETE as revokeSession } from "../../app/api/team/members/[userId]/sessions/[sessionId]/route";
import { GET as listSessions } from "../../app/api/team/members/[userId]/sessions/route";
import { POST as unlock } from "../../app/api/team/members/[userId]/unlock/route";
import { GET as listMembers } from "../../app/api/team/members/route";
import { POST as transfer } from "../../app/api/team/transfer-ownership/route";
import { POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { decrypt } from "../../lib/server/crypto";
import { listAuditEvents } from "../../lib/server/db/audit";
import { getActiveConnection, getConnectionSecret } from "../../lib/server/db/connections";
import { hitRateLimit } from "../../lib/server/db/rate-limit";
import { addMember, getMembership, type Role } from "../../lib/server/db/teams";
import { saveSsoConfig } from "../../lib/server/db/sso";
import { testBackends } from "../../lib/server/db/test-backends";
import { emailRateKey, SIGN_IN_LIMITS } from "../../lib/server/sign-in";
import {
  assignableRoles,
  canChangeRole,
  canInvite,
  canLeave,
  canRemove,
  canTransferOwnership,
} from "../../lib/team-rules";
import type { MemberListDto } from "../../lib/validations/team";
import { useLocalEngine } from "./engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, useConsoleDb } from "./helpers";

const params = (p: Record<string, string>) => ({ params: Promise.resolve(p) });

describe("team rules (lib/team-rules.ts)", () => {
  const one = { activeOwners: 1 };
  const two = { activeOwners: 2 };

  it("nobody invites above their own role; only owners invite owners", () => {
    expect(canInvite("owner", "owner")).toBeNull();
    expect(canInvite("admin", "admin")).toBeNull();
    expect(canInvite("admin", "viewer")).toBeNull();
    expect(canInvite("admin", "owner")?.code).toBe("owner_only");
    expect(canInvite("member", "viewer")?.code).toBe("not_allowed");
    expect(assignableRoles("admin")).toEqual(["admin", "member", "viewer"]);
    expect(assignableRoles("owner")).toEqual(["owner", "admin", "member", "viewer"]);
  });

  it("the last owner can neither be demoted, removed nor leave, and each refusal says what to do", () => {
    const demote = canChangeRole("owner", { role: "owner", self: true }, "admin", one);
    expect(demote?.code).toBe("last_owner");
    expect(demote?.detail).toMatch(/transfer ownership/i);
    expect(canChangeRole("owner", { role: "owner", self: true }, "admin", two)).toBeNull();
    expect(canRemove("owner", { role: "owner", self: false }, one)?.code).toBe("last_owner");
    expect(canRemove("owner", { role: "owner", self: false }, two)).toBeNull();
    expect(canLeave("owner", one)?.detail).toMatch(/transfer ownership/i);
    expect(canLeave("owner", two)).toBeNull();
    expect(canLeave("viewer", one)).toBeNull();
  });

  it("admins manage admins and below; only owners touch owners or make them", () => {
    expect(canChangeRole("admin", { role: "member", self: false }, "admin", one)).toBeNull();
    expect(canChangeRole("admin", { role: "member", self: false }, "owner", one)?.code).toBe("owner_only");
    expect(canChangeRole("admin", { role: "owner", self: false }, "member", two)?.code).toBe("owner_only");
    expect(canRemove("admin", { role: "owner", self: false }, two)?.code).toBe("owner_only");
    expect(canRemove("admin", { role: "viewer", self: true }, two)?.code).toBe("self");
    expect(canTransferOwnership("admin", { self: false, disabled: false })?.code).toBe("owner_only");
    expect(canTransferOwnership("owner", { self: false, disabled: true })?.code).toBe("not_allowed");
    expect(canTransferOwnership("owner", { self: false, disabled: false })).toBeNull();
  });
});

describe.each(testBackends)("members of a team ($name)", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  async function team() {
    const owner = await makeUser(ctx.db(), "owner");
    const teamId = owner.teamId!;
    const join = async (role: Role) => {
      const { user } = await makeUser(ctx.db(), null);
      await addMember(ctx.db(), { teamId, userId: user.id, role });
      return { user, cookie: (await sessionCookie(ctx.db(), user.id)).cookie };
    };
    return { owner: { ...owner, cookie: (await sessionCookie(ctx.db(), owner.user.id)).cookie }, teamId, join };
  }

  /** The plaintext engine token the user's active connection holds, and what the engine answers it. */
  async function engineTokenOf(userId: string): Promise<string> {
    const conn = (await getActiveConnection(ctx.db(), userId))!;
    const secret = (await getConnectionSecret(ctx.db(), userId, conn.id))!;
    return decrypt(secret.ciphertext, { aad: secret.aad });
  }
  async function engineRead(token: string): Promise<number> {
    const res = await fetch(`${ctx.engine().url}/sandboxes`, { headers: { authorization: `Bearer ${token}` } });
    await res.body?.cancel();
    return res.status;
  }
  async function connect(cookie: string) {
    const res = await localEngine(request("/api/connections/local-engine", { method: "POST", cookie }), noParams);
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
  }
  const patchRole = (cookie: string, userId: string, role: string) =>
    changeRole(request(`/api/team/members/${userId}`, { method: "PATCH", cookie, body: { role } }), params({ userId }));

  it("lists members with role, sign-in method, last active and their sandboxes", async () => {
    const { owner, join } = await team();
    const member = await join("member");
    await connect(owner.cookie);
    const created = await createSandbox(
      request("/api/v1/sandboxes", {
        method: "POST",
        cookie: owner.cookie,
        // Baton stamps the creator (baton.user) itself: a client's own baton.* keys are refused.
        body: { template: "python-3.12" },
      }),
      noParams,
    );
    expect(created.status).toBe(201);
    const res = await listMembers(request("/api/team/members", { cookie: member.cookie }), noParams);
    // The member has no connection: the counts cannot be asked, and say so (null), not 0.
    expect(res.status).toBe(200);
    const asMember = (await jsonOf(res)) as unknown as MemberListDto;
    expect(asMember.members.map((m) => m.role)).toEqual(["owner", "member"]);
    expect(asMember.members[0]!.sandbox_count).toBeNull();
    const asOwner = (await jsonOf(
      await listMembers(request("/api/team/members", { cookie: owner.cookie }), noParams),
    )) as unknown as MemberListDto;
    const me = asOwner.members.find((m) => m.is_you)!;
    expect(me).toMatchObject({
      user_id: owner.user.id,
      role: "owner",
      sign_in_method: "password",
      sandbox_count: 1,
      sandboxes_href: `/sandboxes?creator=${owner.user.id}`,
      disabled: false,
    });
    expect(me.last_active_at).not.toBeNull();
    expect(asOwner.members.find((m) => m.user_id === member.user.id)!.sandbox_count).toBe(0);
  }, 60_000);

  it("the last owner is neither demoted, removed nor let go; the refusal says to transfer ownership", async () => {
    const { owner, teamId, join } = await team();
    const admin = await join("admin");
    const demote = await patchRole(owner.cookie, owner.user.id, "admin");
    expect(demote.status).toBe(409);
    expect(await jsonOf(demote)).toMatchObject({
      code: "last_owner",
      detail: expect.stringMatching(/transfer ownership/i),
    });
    const left = await leave(
      request("/api/team/leave", { method: "POST", cookie: owner.cookie, body: { team_id: teamId } }),
      noParams,
    );
    expect(left.status).toBe(409);
    expect(await jsonOf(left)).toMatchObject({
      code: "last_owner",
      detail: expect.stringMatching(/transfer ownership/i),
    });
    // An admin may not touch the owner at all.
    const byAdmin = await removeMember(
      request(`/api/team/members/${owner.user.id}`, { method: "DELETE", cookie: admin.cookie }),
      params({ userId: owner.user.id }),
    );
    expect(byAdmin.status).toBe(403);
    expect(await jsonOf(byAdmin)).toMatchObject({ code: "owner_only" });
    expect((await getMembership(ctx.db(), teamId, owner.user.id))?.role).toBe("owner");
  });

  it("nobody assigns a role above their own; only owners make owners", async () => {
    const { owner, join } = await team();
    const admin = await join("admin");
    const viewer = await join("viewer");
    const up = await patchRole(admin.cookie, viewer.user.id, "owner");
    expect(up.status).toBe(403);
    expect(await jsonOf(up)).toMatchObject({ code: "owner_only" });
    const ok = await patchRole(admin.cookie, viewer.user.id, "admin");
    expect(ok.status).toBe(200);
    expect(await jsonOf(ok)).toMatchObject({ member: { role: "admin" } });
    const byOwner = await patchRole(owner.cookie, viewer.user.id, "owner");
    expect(byOwner.status).toBe(200);
    const events = await listAuditEvents(ctx.db(), { teamId: owner.teamId! });
    const change = events.find((e) => e.action === "member.role_change" && e.target === viewer.user.id);
    expect(change?.data).toMatchObject({ before: { role: expect.any(String) }, after: { role: expect.any(String) } });
  });

  it("while SSO syncs roles from the IdP's groups, roles are read-only: 409 roles_synced, and the list says so", async () => {
    const { owner, join } = await team();
    const viewer = await join("viewer");
    await saveSsoConfig(ctx.db(), owner.teamId!, {
      issuer: "https://idp.example.test",
      clientId: "baton",
      clientSecret: "s3cret",
      defaultRole: "member",
      groupClaim: "groups",
      groupRoleMap: [{ group: "eng", role: "member" }],
      allowedGroups: [],
      enforced: false,
      groupSync: true,
      sessionMaxHours: 12,
    });
    const refused = await patchRole(owner.cookie, viewer.user.id, "member");
    expect(refused.status).toBe(409);
    expect(await jsonOf(refused)).toMatchObject({ code: "roles_synced" });
    expect((await getMembership(ctx.db(), owner.teamId!, viewer.user.id))?.role).toBe("viewer");
    const listed = await listMembers(request("/api/team/members", { cookie: owner.cookie }), noParams);
    const list = (await jsonOf(listed)) as unknown as MemberListDto;
    expect(list.roles_synced).toBe(true);
  });

  it("removing a member keeps the team's sandboxes and revokes their engine token at once", async () => {
    const { owner, teamId, join } = await team();
    const member = await join("member");
    await connect(member.cookie);
    const token = await engineTokenOf(member.user.id);
    expect(await engineRead(token)).toBe(200);
    const res = await removeMember(
      request(`/api/team/members/${member.user.id}`, { method: "DELETE", cookie: owner.cookie }),
      params({ userId: member.user.id }),
    );
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toMatchObject({ engine_tokens_revoked: 1 });
    expect(await engineRead(token)).toBe(401);
    expect(await getMembership(ctx.db(), teamId, member.user.id)).toBeNull();
  }, 60_000);

  it("disabling a member ends their sessions and engine token at once; enabling lets them back", async () => {
    const { owner, teamId, join } = await team();
    const member = await join("member");
    await connect(member.cookie);
    const token = await engineTokenOf(member.user.id);
    const res = await disable(
      request(`/api/team/members/${member.user.id}/disable`, { method: "POST", cookie: owner.cookie }),
      params({ userId: member.user.id }),
    );
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toMatchObject({ member: { disabled: true }, engine_tokens_revoked: 1 });
    expect((await getMe(request("/api/me", { cookie: member.cookie }), noParams)).status).toBe(401);
    expect(await engineRead(token)).toBe(401);
    // A new sign-in finds no team there while the membership is disabled.
    const again = (await sessionCookie(ctx.db(), member.user.id)).cookie;
    expect(await jsonOf(await getMe(request("/api/me", { cookie: again }), noParams))).toMatchObject({
      memberships: [],
    });
    const list = (await jsonOf(
      await listMembers(request("/api/team/members", { cookie: owner.cookie }), noParams),
    )) as unknown as MemberListDto;
    expect(list.members.find((m) => m.user_id === member.user.id)?.disabled).toBe(true);
    const on = await enable(
      request(`/api/team/members/${member.user.id}/enable`, { method: "POST", cookie: owner.cookie }),
      params({ userId: member.user.id }),
    );
    expect(on.status).toBe(200);
    expect((await getMembership(ctx.db(), teamId, member.user.id))?.role).toBe("member");
    // Nobody disables themselves.
    const self = await disable(
      request(`/api/team/members/${owner.user.id}/disable`, { method: "POST", cookie: owner.cookie }),
      params({ userId: owner.user.id }),
    );
    expect(self.status).toBe(409);
  }, 60_000);

  it("unlocks a sign-in lockout", async () => {
    const { owner, join } = await team();
    const member = await join("viewer");
    for (let i = 0; i < SIGN_IN_LIMITS.email.limit + 1; i++)
      await hitRateLimit(ctx.db(), emailRateKey(member.user.email), SIGN_IN_LIMITS.email);
    const locked = (await jsonOf(
      await listMembers(request("/api/team/members", { cookie: owner.cookie }), noParams),
    )) as unknown as MemberListDto;
    expect(locked.members.find((m) => m.user_id === member.user.id)?.locked_until).not.toBeNull();
    const res = await unlock(
      request(`/api/team/members/${member.user.id}/unlock`, { method: "POST", cookie: owner.cookie }),
      params({ userId: member.user.id }),
    );
    expect(res.status).toBe(200);
    const after = (await jsonOf(
      await listMembers(request("/api/team/members", { cookie: owner.cookie }), noParams),
    )) as unknown as MemberListDto;
    expect(after.members.find((m) => m.user_id === member.user.id)?.locked_until).toBeNull();
  });

  it("shows a member's sessions and revokes one", async () => {
    const { owner, join } = await team();
    const member = await join("member");
    const second = await sessionCookie(ctx.db(), member.user.id);
    const list = await listSessions(
      request(`/api/team/members/${member.user.id}/sessions`, { cookie: owner.cookie }),
      params({ userId: member.user.id }),
    );
    expect(list.status).toBe(200);
    const { sessions } = (await jsonOf(list)) as { sessions: Array<{ id: string }> };
    expect(sessions.map((s) => s.id)).toContain(second.sessionId);
    const res = await revokeSession(
      request(`/api/team/members/${member.user.id}/sessions/${second.sessionId}`, {
        method: "DELETE",
        cookie: owner.cookie,
      }),
      params({ userId: member.user.id, sessionId: second.sessionId }),
    );
    expect(res.status).toBe(204);
    expect((await getMe(request("/api/me", { cookie: second.cookie }), noParams)).status).toBe(401);
    expect((await getMe(request("/api/me", { cookie: member.cookie }), noParams)).status).toBe(200);
  });

  it("transfers ownership; the old owner becomes admin and may then leave", async () => {
    const { owner, teamId, join } = await team();
    const member = await join("member");
    const res = await transfer(
      request("/api/team/transfer-ownership", {
        method: "POST",
        cookie: owner.cookie,
        body: { user_id: member.user.id },
      }),
      noParams,
    );
    expect(res.status).toBe(200);
    expect((await getMembership(ctx.db(), teamId, member.user.id))?.role).toBe("owner");
    expect((await getMembership(ctx.db(), teamId, owner.user.id))?.role).toBe("admin");
    const events = await listAuditEvents(ctx.db(), { teamId });
    expect(events.some((e) => e.action === "team.ownership_transfer")).toBe(true);
    const left = await leave(
      request("/api/team/leave", { method: "POST", cookie: owner.cookie, body: { team_id: teamId } }),
      noParams,
    );
    expect(left.status).toBe(200);
    expect(await getMembership(ctx.db(), teamId, owner.user.id)).toBeNull();
  });
});
