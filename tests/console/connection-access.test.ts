import "server-only";
import { describe, expect, it } from "vitest";
import { DELETE as removeConnection, PATCH as updateConnection } from "../../app/api/connections/[id]/route";
import { GET as me } from "../../app/api/me/route";
import { GET as listConnectionsRoute } from "../../app/api/connections/route";
import { GET as connectionStatus } from "../../app/api/connections/status/route";
import { removeTeamMember } from "../../lib/server/access";
import { listConnections, upsertConnection } from "../../lib/server/db/connections";
import { addMember, createTeamWithOwner, slugify } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { createUser } from "../../lib/server/db/users";
import { jsonOf, noParams, request, sessionCookie, uniq, useConsoleDb } from "./helpers";

// A connection belongs to the team it was made in, and what may be done with it is decided by the
// role in that team (lib/server/connection-access.ts), not by the team the user happens to act in:
// activating one (which picks the team the user works in) needs membership there; replacing its
// token or removing it needs connections.manage there. A connection no team of the user's can use
// is only removable.

describe.each(testBackends)("connections are governed by their own team's role ($name)", (backend) => {
  const ctx = useConsoleDb(backend);

  /** Owner of team B (the older membership) and viewer of team A, with a connection of each (A's active). */
  async function twoTeamUser() {
    const db = ctx.db();
    const t0 = Date.now() - 60_000;
    const user = await createUser(db, { email: `${uniq("two")}@example.com`, passwordHash: null });
    const owner = await createUser(db, { email: `${uniq("owner")}@example.com`, passwordHash: null });
    const { team: b } = await createTeamWithOwner(db, {
      name: "Team B",
      slug: slugify(uniq("b")),
      ownerId: user.id,
      now: t0,
    });
    const { team: a } = await createTeamWithOwner(db, { name: "Team A", slug: slugify(uniq("a")), ownerId: owner.id });
    await addMember(db, { teamId: a.id, userId: user.id, role: "viewer", now: t0 + 1 });
    const base = { userId: user.id, baseUrl: "https://orkestr.invalid", token: "ork_abcdefghijkl" };
    const connB = await upsertConnection(db, { ...base, teamId: b.id, name: "B's" });
    const connA = await upsertConnection(db, { ...base, teamId: a.id, name: "A's", activate: true });
    const { cookie } = await sessionCookie(db, user.id);
    return { user, a, b, connA, connB, cookie };
  }

  const patch = (cookie: string, id: string, body: object) =>
    updateConnection(request(`/api/connections/${id}`, { method: "PATCH", cookie, body }), {
      params: Promise.resolve({ id }),
    });
  const remove = (cookie: string, id: string) =>
    removeConnection(request(`/api/connections/${id}`, { method: "DELETE", cookie }), {
      params: Promise.resolve({ id }),
    });
  const actingTeamId = async (cookie: string) =>
    ((await jsonOf(await me(request("/api/me", { cookie }), noParams))) as { active_team_id: string }).active_team_id;

  it("a viewer of A cannot replace or remove A's connection, however they rank in their other team", async () => {
    const { a, connA, cookie } = await twoTeamUser();
    expect(await actingTeamId(cookie)).toBe(a.id);
    for (const res of [await patch(cookie, connA.id, { token: "ork_zyxwvutsrqpo" }), await remove(cookie, connA.id)]) {
      expect(res.status).toBe(403);
      expect(await jsonOf(res)).toMatchObject({
        code: "forbidden",
        detail: expect.stringMatching(/Team A \(viewer\).*connections\.manage/),
      });
    }
    expect((await listConnections(ctx.db(), connA.userId)).map((c) => c.name).sort()).toEqual(["A's", "B's"]);
  });

  it("the list shows the named team's connections (and unusable ones), each with its team and what the API accepts", async () => {
    const { user, a, b, connA, connB, cookie } = await twoTeamUser();
    const listed = async (slug: string) =>
      (
        (await jsonOf(
          await listConnectionsRoute(
            request("/api/connections", { cookie, headers: { "x-baton-team": slug } }),
            noParams,
          ),
        )) as {
          connections: { id: string; team_name: string | null; is_active: boolean; allowed: Record<string, boolean> }[];
        }
      ).connections;
    const byId = (list: Awaited<ReturnType<typeof listed>>, id: string) => list.find((c) => c.id === id);
    let list = await listed(a.slug);
    expect(byId(list, connA.id)).toMatchObject({
      team_name: "Team A",
      is_active: true,
      allowed: { activate: true, replace_token: false, remove: false },
    });
    expect(byId(list, connB.id)).toBeUndefined();
    list = await listed(b.slug);
    expect(byId(list, connA.id)).toBeUndefined();
    expect(byId(list, connB.id)).toMatchObject({
      team_name: "Team B",
      is_active: true,
      allowed: { activate: true, replace_token: true, remove: true },
    });
    await removeTeamMember({ teamId: a.id, userId: user.id }, { db: ctx.db() });
    list = await listed(b.slug);
    expect(byId(list, connA.id)).toMatchObject({
      team_name: null,
      is_active: false,
      allowed: { activate: false, replace_token: false, remove: true },
    });
  });

  it("activating a connection never switches the team a request names", async () => {
    const { a, b, connA, connB, cookie } = await twoTeamUser();
    const named = async (slug: string) =>
      (
        (await jsonOf(await me(request("/api/me", { cookie, headers: { "x-baton-team": slug } }), noParams))) as {
          active_team_id: string;
        }
      ).active_team_id;
    expect((await patch(cookie, connA.id, { active: true })).status).toBe(200);
    expect(await named(b.slug)).toBe(b.id);
    expect((await patch(cookie, connB.id, { active: true })).status).toBe(200);
    expect(await named(a.slug)).toBe(a.id);
  });

  it("activating a connection picks the team: a viewer may switch to their own team and back, and removes B's as its owner", async () => {
    const { a, b, connA, connB, cookie } = await twoTeamUser();
    expect((await patch(cookie, connB.id, { active: true })).status).toBe(200);
    expect(await actingTeamId(cookie)).toBe(b.id);
    expect((await patch(cookie, connA.id, { active: true })).status).toBe(200);
    expect(await actingTeamId(cookie)).toBe(a.id);
    // Acting in A as a viewer, B's connection is still B's owner's to remove.
    expect((await remove(cookie, connB.id)).status).toBe(200);
  });

  it("a connection of a team the user left is never used, cannot be activated, and can be removed", async () => {
    const { user, a, b, connA, cookie } = await twoTeamUser();
    await removeTeamMember({ teamId: a.id, userId: user.id }, { db: ctx.db() });
    // Acting in B now: A's connection (still active) is not used for it.
    expect(await actingTeamId(cookie)).toBe(b.id);
    const status = await connectionStatus(request("/api/connections/status", { cookie }), noParams);
    expect(await jsonOf(status)).toMatchObject({ connection: { name: "B's" } });
    const activate = await patch(cookie, connA.id, { active: true });
    expect(activate.status).toBe(403);
    expect(await jsonOf(activate)).toMatchObject({ detail: expect.stringContaining("belongs to no team of yours") });
    expect((await remove(cookie, connA.id)).status).toBe(200);
  });

  it("another user's connection id is a 404, as one that never existed", async () => {
    const { connA } = await twoTeamUser();
    const other = await twoTeamUser();
    expect((await patch(other.cookie, connA.id, { active: true })).status).toBe(404);
    expect((await remove(other.cookie, connA.id)).status).toBe(404);
  });
});
