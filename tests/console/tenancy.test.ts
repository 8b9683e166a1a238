import "server-only";
import { describe, expect, it } from "vitest";
import { DELETE as deleteConnectionRoute } from "../../app/api/connections/[id]/route";
import { POST as localEngine } from "../../app/api/connections/local-engine/route";
import { POST as execJson } from "../../app/api/v1/sandboxes/[id]/exec/route";
import { DELETE as terminate, GET as getSandbox } from "../../app/api/v1/sandboxes/[id]/route";
import { GET as listSandboxes, POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { changeMemberRole, disableUser, removeTeamMember } from "../../lib/server/access";
import { decrypt } from "../../lib/server/crypto";
import { getActiveConnection, getConnectionSecret, listConnections } from "../../lib/server/db/connections";
import { addMember, type Role } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { createUser } from "../../lib/server/db/users";
import { connectLocalEngine } from "../../lib/server/tokens";
import { useLocalEngine } from "./engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, uniq, useConsoleDb } from "./helpers";

type Params = Record<string, string>;
const params = (p: Params) => ({ params: Promise.resolve(p) });

/**
 * Baton teams on the local engine: "Use the local engine" mints each member a token of their team's
 * engine account, so a team's members share its sandboxes and another team sees none of them, in
 * either direction. Taking access away (the connection, the membership, the user) revokes the token
 * on the engine at once.
 */
describe.each(testBackends)("teams on the local engine ($name)", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  /** The engine's record of a token (by its id), through the admin API. */
  async function engineToken(id: string): Promise<{
    id: string;
    account: { name: string };
    label: string | null;
    scopes: string[];
    revoked_at: string | null;
  }> {
    const e = ctx.engine();
    const r = await fetch(`${e.origin}/_admin/tokens`, { headers: { "x-baton-bootstrap": e.bootstrap! } });
    const all = (await r.json()) as {
      id: string;
      account: { name: string };
      label: string | null;
      scopes: string[];
      revoked_at: string | null;
    }[];
    const found = all.find((t) => t.id === id);
    if (!found) throw new Error(`engine token ${id} not found`);
    return found;
  }

  async function connect(userId: string) {
    const { cookie } = await sessionCookie(ctx.db(), userId);
    const res = await localEngine(request("/api/connections/local-engine", { method: "POST", cookie }), noParams);
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
    const conn = (await getActiveConnection(ctx.db(), userId))!;
    return { cookie, conn };
  }

  async function newSandbox(cookie: string, name: string): Promise<string> {
    const res = await createSandbox(
      request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "python-3.12", metadata: { name } } }),
      noParams,
    );
    expect(res.status).toBe(201);
    return ((await jsonOf(res)) as { id: string }).id;
  }

  const ids = async (cookie: string) =>
    ((await (await listSandboxes(request("/api/v1/sandboxes", { cookie }), noParams)).json()) as { id: string }[]).map(
      (s) => s.id,
    );

  it("a team's members share its sandboxes; another team sees none of them, either way", async () => {
    const a = await makeUser(ctx.db(), "owner");
    const b = await makeUser(ctx.db(), "owner");
    const a2 = await createUser(ctx.db(), { email: `${uniq("member")}@example.com`, passwordHash: null });
    await addMember(ctx.db(), { teamId: a.teamId!, userId: a2.id, role: "member" });
    const ca = await connect(a.user.id);
    const ca2 = await connect(a2.id);
    const cb = await connect(b.user.id);

    // Each token is the member's own, labelled with who holds it, in the team's account.
    const ta = await engineToken(ca.conn.engineTokenId!);
    const ta2 = await engineToken(ca2.conn.engineTokenId!);
    const tb = await engineToken(cb.conn.engineTokenId!);
    expect(ta.id).not.toBe(ta2.id);
    expect(ta.account.name).toBe(a.teamId!.toLowerCase());
    expect(ta2.account.name).toBe(ta.account.name);
    expect(tb.account.name).toBe(b.teamId!.toLowerCase());
    expect(ta.label).toContain(a.user.email);

    const sa = await newSandbox(ca.cookie, "team-a");
    const sb = await newSandbox(cb.cookie, "team-b");
    // Shared within the team...
    expect(await ids(ca2.cookie)).toContain(sa);
    expect(
      (await getSandbox(request(`/api/v1/sandboxes/${sa}`, { cookie: ca2.cookie }), params({ id: sa }))).status,
    ).toBe(200);
    // ...and invisible across teams, in both directions, for reads and writes.
    expect(await ids(cb.cookie)).not.toContain(sa);
    expect(await ids(ca.cookie)).not.toContain(sb);
    for (const [cookie, id] of [
      [cb.cookie, sa],
      [ca.cookie, sb],
      [ca2.cookie, sb],
    ] as const) {
      expect((await getSandbox(request(`/api/v1/sandboxes/${id}`, { cookie }), params({ id }))).status).toBe(404);
      const ran = await execJson(
        request(`/api/v1/sandboxes/${id}/exec`, {
          method: "POST",
          cookie,
          body: { command: "touch /workspace/pwned" },
        }),
        params({ id }),
      );
      expect(ran.status).toBe(404);
      expect(
        (await terminate(request(`/api/v1/sandboxes/${id}`, { method: "DELETE", cookie }), params({ id }))).status,
      ).toBe(404);
    }
    expect(
      (
        (await jsonOf(
          await getSandbox(request(`/api/v1/sandboxes/${sa}`, { cookie: ca.cookie }), params({ id: sa })),
        )) as { status: string }
      ).status,
    ).toBe("running");
    expect(
      (
        (await jsonOf(
          await getSandbox(request(`/api/v1/sandboxes/${sb}`, { cookie: cb.cookie }), params({ id: sb })),
        )) as { status: string }
      ).status,
    ).toBe("running");
  }, 60_000);

  it("reconnecting, deleting the connection, leaving the team and being disabled each revoke the engine token", async () => {
    const owner = await makeUser(ctx.db(), "owner");
    const member = await createUser(ctx.db(), { email: `${uniq("member")}@example.com`, passwordHash: null });
    await addMember(ctx.db(), { teamId: owner.teamId!, userId: member.id, role: "member" });

    // Reconnecting replaces the token: the old one is revoked.
    const first = await connect(member.id);
    const second = await connect(member.id);
    expect(second.conn.engineTokenId).not.toBe(first.conn.engineTokenId);
    expect((await engineToken(first.conn.engineTokenId!)).revoked_at).not.toBeNull();
    expect((await engineToken(second.conn.engineTokenId!)).revoked_at).toBeNull();

    // Deleting the connection revokes its token.
    const del = await deleteConnectionRoute(
      request(`/api/connections/${second.conn.id}`, { method: "DELETE", cookie: second.cookie }),
      params({ id: second.conn.id }),
    );
    expect(del.status).toBe(200);
    expect((await engineToken(second.conn.engineTokenId!)).revoked_at).not.toBeNull();

    // Leaving the team revokes the token made for it (and drops that connection).
    const third = await connect(member.id);
    expect(await removeTeamMember({ teamId: owner.teamId!, userId: member.id }, { db: ctx.db() })).toEqual({
      revoked: 1,
      apiTokensRevoked: 0,
    });
    expect((await engineToken(third.conn.engineTokenId!)).revoked_at).not.toBeNull();
    expect(await listConnections(ctx.db(), member.id)).toEqual([]);

    // Disabling a user revokes every engine token they hold: the engine refuses it at once, even
    // to someone who had copied it out of the vault.
    const ownerConn = await connect(owner.user.id);
    const secret = (await getConnectionSecret(ctx.db(), owner.user.id, ownerConn.conn.id))!;
    const plain = decrypt(secret.ciphertext, { aad: secret.aad });
    const e = ctx.engine();
    const asOwner = () => fetch(`${e.url}/sandboxes`, { headers: { authorization: `Bearer ${plain}` } });
    expect((await asOwner()).status).toBe(200);
    expect((await disableUser(owner.user.id, { db: ctx.db() })).revoked).toBe(1);
    expect((await engineToken(ownerConn.conn.engineTokenId!)).revoked_at).not.toBeNull();
    expect((await asOwner()).status).toBe(401);
  }, 60_000);

  /** The plaintext token a user's active connection holds (what someone who copied it out would have). */
  async function heldToken(userId: string): Promise<{ token: string; engineTokenId: string }> {
    const conn = (await getActiveConnection(ctx.db(), userId))!;
    const secret = (await getConnectionSecret(ctx.db(), userId, conn.id))!;
    return { token: decrypt(secret.ciphertext, { aad: secret.aad }), engineTokenId: conn.engineTokenId! };
  }

  /** What the engine itself answers a token: a read, and a write (a sandbox it does not know, so nothing changes). */
  async function engineAnswers(token: string): Promise<{ read: number; write: number }> {
    const e = ctx.engine();
    const auth = { authorization: `Bearer ${token}` };
    const read = await fetch(`${e.url}/sandboxes`, { headers: auth });
    const write = await fetch(`${e.url}/sandboxes/sbx_01NOSUCHSANDBOX0000000000/pause`, {
      method: "POST",
      headers: auth,
    });
    await Promise.all([read.body?.cancel(), write.body?.cancel()]);
    return { read: read.status, write: write.status };
  }

  it("a viewer's engine token can only read, even outside Baton", async () => {
    const owner = await makeUser(ctx.db(), "owner");
    const viewer = await createUser(ctx.db(), { email: `${uniq("viewer")}@example.com`, passwordHash: null });
    await addMember(ctx.db(), { teamId: owner.teamId!, userId: viewer.id, role: "viewer" });
    await connectLocalEngine(viewer.id, { db: ctx.db(), teamId: owner.teamId! });
    const held = await heldToken(viewer.id);
    expect((await engineToken(held.engineTokenId)).scopes).toEqual(["sandboxes:read"]);
    // The engine refuses its writes for lack of the scope (403), before it looks for the sandbox (404).
    expect(await engineAnswers(held.token)).toEqual({ read: 200, write: 403 });
  }, 60_000);

  it("narrowing a member's role revokes the engine token their old role needed; they read on with a new one", async () => {
    const owner = await makeUser(ctx.db(), "owner");
    const user = await createUser(ctx.db(), { email: `${uniq("member")}@example.com`, passwordHash: null });
    await addMember(ctx.db(), { teamId: owner.teamId!, userId: user.id, role: "member" });
    const { cookie } = await connect(user.id);
    const before = await heldToken(user.id);
    expect((await engineToken(before.engineTokenId)).scopes).toEqual(["sandboxes:read", "sandboxes:write"]);
    expect(await engineAnswers(before.token)).toEqual({ read: 200, write: 404 });

    const role = (r: Role) => changeMemberRole({ teamId: owner.teamId!, userId: user.id, role: r }, { db: ctx.db() });
    expect(await role("viewer")).toMatchObject({ membership: { role: "viewer" }, revoked: 1 });
    // The write token is revoked on the engine: a copy taken out of the vault before is refused.
    expect((await engineToken(before.engineTokenId)).revoked_at).not.toBeNull();
    expect((await engineAnswers(before.token)).read).toBe(401);
    // The connection now holds a read-only token of the same account, and the console reads through it.
    const after = await heldToken(user.id);
    expect(after.engineTokenId).not.toBe(before.engineTokenId);
    expect(await engineToken(after.engineTokenId)).toMatchObject({
      scopes: ["sandboxes:read"],
      account: { name: owner.teamId!.toLowerCase() },
      revoked_at: null,
    });
    expect(await engineAnswers(after.token)).toEqual({ read: 200, write: 403 });
    expect((await listSandboxes(request("/api/v1/sandboxes", { cookie }), noParams)).status).toBe(200);

    // A change that needs no other scopes keeps the token; widening again gives writes back.
    expect(await role("member")).toMatchObject({ revoked: 1 });
    const widened = await heldToken(user.id);
    expect((await engineToken(widened.engineTokenId)).scopes).toEqual(["sandboxes:read", "sandboxes:write"]);
    expect(await role("admin")).toMatchObject({ revoked: 0 });
    expect((await heldToken(user.id)).engineTokenId).toBe(widened.engineTokenId);
  }, 60_000);
});
