import "server-only";
import { describe, expect, it } from "vitest";
import { POST as localEngine } from "../../app/api/connections/local-engine/route";
import { PATCH as patchSandbox } from "../../app/api/v1/sandboxes/[id]/route";
import { POST as createSnapshot } from "../../app/api/v1/sandboxes/[id]/snapshots/route";
import { GET as listSandboxes, POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { addMember } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { createUser } from "../../lib/server/db/users";
import { useLocalEngine } from "./engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, uniq, useConsoleDb } from "./helpers";

// The creator stamp (lib/server/creator-stamp.ts) against the real engine: every sandbox made
// through Baton (create and fork) carries baton.user and baton.team, a client's own baton.* keys
// are refused (422 reserved_metadata) on create and on PATCH, a PATCH keeps the stored stamp, and
// the list filters by creator on the engine (metadata[baton.user]=…).

type Sandbox = { id: string; metadata: Record<string, string> };
const params = (p: Record<string, string>) => ({ params: Promise.resolve(p) });

describe.each(testBackends)("the creator stamp on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  /** An owner and a member of one team, each connected to the team's local-engine account. */
  async function team() {
    const { user: owner, teamId } = await makeUser(ctx.db(), "owner");
    const member = await createUser(ctx.db(), { email: `${uniq("member")}@example.com`, passwordHash: null });
    await addMember(ctx.db(), { teamId: teamId!, userId: member.id, role: "member" });
    const people = [];
    for (const user of [owner, member]) {
      const { cookie } = await sessionCookie(ctx.db(), user.id);
      const res = await localEngine(request("/api/connections/local-engine", { method: "POST", cookie }), noParams);
      expect(res.status).toBe(201);
      people.push({ id: user.id, cookie });
    }
    return { teamId: teamId!, owner: people[0]!, member: people[1]! };
  }

  async function create(cookie: string, body: object): Promise<Response> {
    return createSandbox(request("/api/v1/sandboxes", { method: "POST", cookie, body }), noParams);
  }

  async function list(cookie: string, query: string): Promise<Sandbox[]> {
    const res = await listSandboxes(request(`/api/v1/sandboxes?${query}`, { cookie }), noParams);
    expect(res.status).toBe(200);
    return (await res.json()) as Sandbox[];
  }

  /** The sandbox as the engine stores it (through the team's account, not through the console). */
  async function stored(cookie: string, id: string): Promise<Sandbox> {
    const all = await list(cookie, `status=running,paused&limit=100`);
    const found = all.find((s) => s.id === id);
    expect(found, id).toBeDefined();
    return found!;
  }

  it("stamps create and fork with the user and the team; the list filters by creator", async () => {
    const { teamId, owner, member } = await team();
    const res = await create(owner.cookie, { template: "python-3.12", metadata: { agent_run: "r_1" } });
    expect(res.status).toBe(201);
    const made = (await jsonOf(res)) as unknown as Sandbox;
    expect(made.metadata).toEqual({ agent_run: "r_1", "baton.user": owner.id, "baton.team": teamId });

    // A fork is a create from a snapshot: stamped with whoever forked it.
    const snap = await createSnapshot(
      request(`/api/v1/sandboxes/${made.id}/snapshots`, {
        method: "POST",
        cookie: owner.cookie,
        body: { name: uniq("s") },
      }),
      params({ id: made.id }),
    );
    expect(snap.status).toBe(201);
    const snapshotId = ((await jsonOf(snap)) as { id: string }).id;
    const forked = await create(member.cookie, { snapshot: snapshotId });
    expect(forked.status).toBe(201);
    const fork = (await jsonOf(forked)) as unknown as Sandbox;
    expect(fork.metadata).toMatchObject({ "baton.user": member.id, "baton.team": teamId });
    expect(fork.metadata).not.toHaveProperty("agent_run");

    // Nor can a fork name another creator: the same 422, and no sandbox is made from the snapshot.
    for (const metadata of [{ "baton.user": owner.id }, { "BATON.team": "team_other", ok: "1" }]) {
      const refused = await create(member.cookie, { snapshot: snapshotId, metadata });
      expect(refused.status).toBe(422);
      expect((await jsonOf(refused)).code).toBe("reserved_metadata");
    }

    // The engine keeps the stamp (read back through the list, not from the create answer).
    expect((await stored(owner.cookie, fork.id)).metadata["baton.user"]).toBe(member.id);

    // ?creator= on the page is metadata[baton.user]=… on the API: each sees exactly whose is whose.
    const byOwner = await list(owner.cookie, `metadata[baton.user]=${encodeURIComponent(owner.id)}&limit=100`);
    const byMember = await list(owner.cookie, `metadata[baton.user]=${encodeURIComponent(member.id)}&limit=100`);
    expect(byOwner.map((s) => s.id)).toEqual([made.id]);
    expect(byMember.map((s) => s.id)).toEqual([fork.id]);
    const byTeam = await list(member.cookie, `metadata[baton.team]=${encodeURIComponent(teamId)}&limit=100`);
    expect(byTeam.map((s) => s.id).sort()).toEqual([made.id, fork.id].sort());
  });

  it("refuses a client's own baton.* keys on create (422 reserved_metadata) and creates nothing", async () => {
    const { owner } = await team();
    const before = await list(owner.cookie, "limit=100");
    for (const metadata of [{ "baton.user": "usr_someone_else" }, { ok: "1", "Baton.Team": "team_other" }]) {
      const res = await create(owner.cookie, { template: "python-3.12", metadata });
      expect(res.status).toBe(422);
      const body = await jsonOf(res);
      expect(body.code).toBe("reserved_metadata");
      expect(String(body.detail)).toContain(Object.keys(metadata).find((k) => k.toLowerCase().startsWith("baton."))!);
    }
    expect((await list(owner.cookie, "limit=100")).length).toBe(before.length);
  });

  it("PATCH keeps the stored stamp, and refuses baton.* keys without changing anything", async () => {
    const { teamId, owner, member } = await team();
    const made = (await jsonOf(await create(owner.cookie, { template: "python-3.12" }))) as unknown as Sandbox;
    const patch = (cookie: string, body: object) =>
      patchSandbox(request(`/api/v1/sandboxes/${made.id}`, { method: "PATCH", cookie, body }), params({ id: made.id }));
    const stamp = { "baton.user": owner.id, "baton.team": teamId };

    // New metadata replaces the old on the engine, but the stamp is put back, even by another member.
    const replaced = await patch(member.cookie, { metadata: { env: "prod" } });
    expect(replaced.status).toBe(200);
    expect(((await jsonOf(replaced)) as unknown as Sandbox).metadata).toEqual({ env: "prod", ...stamp });
    expect((await stored(owner.cookie, made.id)).metadata).toEqual({ env: "prod", ...stamp });

    // Clearing the metadata clears only the user's keys.
    const cleared = await patch(owner.cookie, { metadata: {} });
    expect(((await jsonOf(cleared)) as unknown as Sandbox).metadata).toEqual(stamp);

    // A PATCH without metadata leaves it alone.
    const settings = await patch(owner.cookie, { auto_resume: true });
    expect(settings.status).toBe(200);
    expect(((await jsonOf(settings)) as unknown as Sandbox).metadata).toEqual(stamp);

    // Rewriting the stamp (or adding to it) is refused, and the sandbox is as it was.
    for (const metadata of [{ "baton.user": member.id }, { env: "x", "baton.team": "team_other" }]) {
      const res = await patch(member.cookie, { metadata });
      expect(res.status).toBe(422);
      expect((await jsonOf(res)).code).toBe("reserved_metadata");
    }
    expect((await stored(owner.cookie, made.id)).metadata).toEqual(stamp);
  });
});
