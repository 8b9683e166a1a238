import "server-only";
import { describe, expect, it } from "vitest";
import { POST as localEngine } from "../../app/api/connections/local-engine/route";
import { DELETE as deleteTeamRoute } from "../../app/api/team/route";
import { POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { decrypt } from "../../lib/server/crypto";
import { getActiveConnection, getConnectionSecret, listConnections } from "../../lib/server/db/connections";
import { listAuditEvents } from "../../lib/server/db/audit";
import { addMember, getTeam } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { createUser } from "../../lib/server/db/users";
import { mintLocalEngineToken } from "../../lib/server/local-engine";
import { useLocalEngine } from "./engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, uniq, useConsoleDb } from "./helpers";

/**
 * Deleting a team against the real local engine: every member's engine token of the team is
 * revoked on the engine, and the team's sandboxes are terminated or left, as the owner chose.
 */
describe.each(testBackends)("deleting a team on the local engine ($name)", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  async function connect(userId: string) {
    const { cookie } = await sessionCookie(ctx.db(), userId);
    const res = await localEngine(request("/api/connections/local-engine", { method: "POST", cookie }), noParams);
    expect(res.status).toBe(201);
    const conn = (await getActiveConnection(ctx.db(), userId))!;
    const secret = (await getConnectionSecret(ctx.db(), userId, conn.id))!;
    return { cookie, token: decrypt(secret.ciphertext, { aad: secret.aad }) };
  }

  async function newSandbox(cookie: string): Promise<string> {
    const res = await createSandbox(
      request("/api/v1/sandboxes", {
        method: "POST",
        cookie,
        body: { template: "python-3.12", metadata: { name: uniq("sbx") } },
      }),
      noParams,
    );
    expect(res.status).toBe(201);
    return ((await jsonOf(res)) as { id: string }).id;
  }

  /** The sandboxes' statuses as the engine itself tells them, through a fresh token of the team's account. */
  async function statuses(teamId: string, ids: string[]): Promise<string[]> {
    const { token } = await mintLocalEngineToken({
      account: teamId.toLowerCase(),
      label: "test",
      scopes: ["sandboxes:read"],
    });
    return Promise.all(
      ids.map(async (id) => {
        const r = await fetch(`${ctx.engine().url}/sandboxes/${id}`, { headers: { authorization: `Bearer ${token}` } });
        return ((await r.json()) as { status: string }).status;
      }),
    );
  }

  const engineStatus = async (token: string) => {
    const r = await fetch(`${ctx.engine().url}/sandboxes`, { headers: { authorization: `Bearer ${token}` } });
    await r.body?.cancel();
    return r.status;
  };

  async function teamWithSandboxes() {
    const owner = await makeUser(ctx.db(), "owner");
    const member = await createUser(ctx.db(), { email: `${uniq("member")}@example.com`, passwordHash: null });
    await addMember(ctx.db(), { teamId: owner.teamId!, userId: member.id, role: "member" });
    const o = await connect(owner.user.id);
    const m = await connect(member.id);
    const ids = [await newSandbox(o.cookie), await newSandbox(m.cookie)];
    expect(await statuses(owner.teamId!, ids)).toEqual(["running", "running"]);
    expect([await engineStatus(o.token), await engineStatus(m.token)]).toEqual([200, 200]);
    const slug = (await getTeam(ctx.db(), owner.teamId!))!.slug;
    return { owner, member, o, m, ids, slug };
  }

  const del = (cookie: string, body: object) =>
    deleteTeamRoute(request("/api/team", { method: "DELETE", cookie, body }), noParams);

  it("terminate: the team's sandboxes are terminated and every member's engine token is revoked", async () => {
    const t = await teamWithSandboxes();
    const res = await del(t.o.cookie, { confirm: t.slug, sandboxes: "terminate" });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
    expect(await jsonOf(res)).toEqual({ deleted: true, sandboxes: "terminate", terminated: 2, tokens_revoked: 2 });
    expect(await statuses(t.owner.teamId!, t.ids)).toEqual(["terminated", "terminated"]);
    expect([await engineStatus(t.o.token), await engineStatus(t.m.token)]).toEqual([401, 401]);
    expect(await getTeam(ctx.db(), t.owner.teamId!)).toBeNull();
    expect(await listConnections(ctx.db(), t.member.id)).toEqual([]);
    // The deletion is filed under the team it ended (audit rows outlive their team).
    const rows = await listAuditEvents(ctx.db(), { teamId: t.owner.teamId! });
    expect(rows.find((r) => r.action === "team.delete")).toMatchObject({ userId: t.owner.user.id });
  }, 90_000);

  it("leave: the sandboxes keep running, and the tokens are revoked all the same", async () => {
    const t = await teamWithSandboxes();
    const res = await del(t.o.cookie, { confirm: t.slug, sandboxes: "leave" });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ deleted: true, sandboxes: "leave", terminated: 0, tokens_revoked: 2 });
    expect(await statuses(t.owner.teamId!, t.ids)).toEqual(["running", "running"]);
    expect([await engineStatus(t.o.token), await engineStatus(t.m.token)]).toEqual([401, 401]);
    expect(await getTeam(ctx.db(), t.owner.teamId!)).toBeNull();
  }, 90_000);

  it("a member cannot delete the team, whatever they type", async () => {
    const t = await teamWithSandboxes();
    const res = await del(t.m.cookie, { confirm: t.slug, sandboxes: "terminate" });
    expect(res.status).toBe(403);
    expect(await statuses(t.owner.teamId!, t.ids)).toEqual(["running", "running"]);
    expect(await engineStatus(t.m.token)).toBe(200);
  }, 90_000);
});
