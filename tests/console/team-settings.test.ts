import "server-only";
import { describe, expect, it } from "vitest";
import { DELETE as deleteTeam, GET as getTeam, PATCH as patchTeam } from "../../app/api/team/route";
import { listAuditEvents } from "../../lib/server/db/audit";
import { addMember, createTeamWithOwner, getTeam as readTeam, slugify } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { jsonOf, makeUser, noParams, request, sessionCookie, uniq, useConsoleDb } from "./helpers";

describe.each(testBackends)("team settings on $name", (backend) => {
  const ctx = useConsoleDb(backend);

  async function as(role: "owner" | "admin" | "member" | "viewer") {
    const { user, teamId } = await makeUser(ctx.db(), role);
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    return { user, teamId: teamId!, cookie };
  }
  const patch = (cookie: string, body: object) =>
    patchTeam(request("/api/team", { method: "PATCH", cookie, body }), noParams);

  it("every member reads the team; what their role may do with it is said", async () => {
    const viewer = await as("viewer");
    const res = await getTeam(request("/api/team", { cookie: viewer.cookie }), noParams);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toMatchObject({
      team: { id: viewer.teamId },
      role: "viewer",
      can_manage: false,
      can_delete: false,
    });
    const owner = await as("owner");
    expect(await jsonOf(await getTeam(request("/api/team", { cookie: owner.cookie }), noParams))).toMatchObject({
      can_manage: true,
      can_delete: true,
    });
  });

  it("an admin renames the team and changes its slug, audited with before and after", async () => {
    const admin = await as("admin");
    const before = (await readTeam(ctx.db(), admin.teamId))!;
    const slug = slugify(uniq("renamed"));
    const res = await patch(admin.cookie, { name: "Renamed Co", slug: slug.toUpperCase() });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toMatchObject({ team: { name: "Renamed Co", slug } });
    expect(await readTeam(ctx.db(), admin.teamId)).toMatchObject({ name: "Renamed Co", slug });
    const event = (await listAuditEvents(ctx.db(), { teamId: admin.teamId })).find((e) => e.action === "team.update");
    expect(event).toMatchObject({
      userId: admin.user.id,
      target: admin.teamId,
      data: { before: { name: before.name, slug: before.slug }, after: { name: "Renamed Co", slug } },
    });
  });

  it("a slug another team has is 409 slug_taken; a malformed one 422; nothing changes", async () => {
    const admin = await as("admin");
    const other = await makeUser(ctx.db(), null);
    const taken = slugify(uniq("taken"));
    await createTeamWithOwner(ctx.db(), { name: "Other", slug: taken, ownerId: other.user.id });
    const conflict = await patch(admin.cookie, { slug: taken });
    expect(conflict.status).toBe(409);
    expect(await jsonOf(conflict)).toMatchObject({ code: "slug_taken" });
    for (const slug of ["-bad", "bad-", "has space", "a".repeat(49), ""]) {
      const res = await patch(admin.cookie, { slug });
      expect(res.status, slug).toBe(422);
    }
    expect((await patch(admin.cookie, {})).status).toBe(422);
    expect((await readTeam(ctx.db(), admin.teamId))!.slug).not.toBe(taken);
  });

  it("only an owner lets admins manage billing; the admin then holds billing.manage, audited both ways", async () => {
    const owner = await as("owner");
    const adminUser = await makeUser(ctx.db(), null);
    await addMember(ctx.db(), { teamId: owner.teamId, userId: adminUser.user.id, role: "admin" });
    const { cookie: adminCookie } = await sessionCookie(ctx.db(), adminUser.user.id);
    const team = { "x-baton-team": (await readTeam(ctx.db(), owner.teamId))!.slug };
    const read = async (cookie: string) =>
      jsonOf(await getTeam(request("/api/team", { cookie, headers: team }), noParams));
    expect(await read(adminCookie)).toMatchObject({
      admins_manage_billing: false,
      can_manage_billing: false,
      can_delegate_billing: false,
    });

    // An admin may rename the team but not delegate billing to themselves.
    const refused = await patchTeam(
      request("/api/team", {
        method: "PATCH",
        cookie: adminCookie,
        headers: team,
        body: { admins_manage_billing: true },
      }),
      noParams,
    );
    expect(refused.status).toBe(403);
    expect(await jsonOf(refused)).toMatchObject({
      code: "forbidden",
      detail: expect.stringContaining("Only the owners"),
    });
    expect((await readTeam(ctx.db(), owner.teamId))!.adminsManageBilling).toBe(false);
    expect((await patch(owner.cookie, { admins_manage_billing: "yes" })).status).toBe(422);

    const on = await patch(owner.cookie, { admins_manage_billing: true });
    expect(on.status).toBe(200);
    expect(await jsonOf(on)).toMatchObject({ admins_manage_billing: true, can_delegate_billing: true });
    expect(await read(adminCookie)).toMatchObject({
      admins_manage_billing: true,
      can_manage_billing: true,
      can_delegate_billing: false,
    });
    const off = await patch(owner.cookie, { admins_manage_billing: false });
    expect(await jsonOf(off)).toMatchObject({ admins_manage_billing: false });
    expect(await read(adminCookie)).toMatchObject({ can_manage_billing: false });

    const events = (await listAuditEvents(ctx.db(), { teamId: owner.teamId })).filter(
      (e) => e.action === "team.update" && e.userId === owner.user.id,
    );
    expect(
      events.map((e) => (e.data as { after: { admins_manage_billing: boolean } }).after.admins_manage_billing).sort(),
    ).toEqual([false, true]);
    const refusal = (await listAuditEvents(ctx.db(), { teamId: owner.teamId })).find(
      (e) => e.action === "team.update" && e.userId === adminUser.user.id,
    );
    expect(refusal).toMatchObject({ result: "forbidden", targetId: owner.teamId });
  });

  it("members and viewers may not change the team; only the owner may delete it", async () => {
    for (const role of ["member", "viewer"] as const) {
      const who = await as(role);
      const res = await patch(who.cookie, { name: "Nope" });
      expect(res.status, role).toBe(403);
      expect(await jsonOf(res)).toMatchObject({ code: "forbidden" });
    }
    const admin = await as("admin");
    const team = (await readTeam(ctx.db(), admin.teamId))!;
    const res = await deleteTeam(
      request("/api/team", {
        method: "DELETE",
        cookie: admin.cookie,
        body: { confirm: team.slug, sandboxes: "leave" },
      }),
      noParams,
    );
    expect(res.status).toBe(403);
    expect(await jsonOf(res)).toMatchObject({ code: "forbidden", detail: expect.stringContaining("team.delete") });
    expect(await readTeam(ctx.db(), admin.teamId)).not.toBeNull();
  });

  it("deleting needs the team's slug typed exactly, and a choice for the sandboxes", async () => {
    const owner = await as("owner");
    const team = (await readTeam(ctx.db(), owner.teamId))!;
    const del = (body: object) =>
      deleteTeam(request("/api/team", { method: "DELETE", cookie: owner.cookie, body }), noParams);
    const wrong = await del({ confirm: team.name + "x", sandboxes: "leave" });
    expect(wrong.status).toBe(422);
    expect(await jsonOf(wrong)).toMatchObject({ code: "confirmation_mismatch" });
    expect((await del({ confirm: team.slug, sandboxes: "archive" })).status).toBe(422);
    expect((await del({ confirm: team.slug })).status).toBe(422);
    expect(await readTeam(ctx.db(), owner.teamId)).not.toBeNull();
    // Terminating needs a connection to reach the sandboxes: without one, refused, nothing deleted.
    const noConn = await del({ confirm: team.slug, sandboxes: "terminate" });
    expect(noConn.status).toBe(409);
    expect(await readTeam(ctx.db(), owner.teamId)).not.toBeNull();
    const ok = await del({ confirm: team.slug, sandboxes: "leave" });
    expect(ok.status).toBe(200);
    expect(await jsonOf(ok)).toMatchObject({ deleted: true, sandboxes: "leave", terminated: 0 });
    expect(await readTeam(ctx.db(), owner.teamId)).toBeNull();
    const event = (await listAuditEvents(ctx.db(), { userId: owner.user.id })).find((e) => e.action === "team.delete");
    expect(event).toMatchObject({ target: owner.teamId, data: { slug: team.slug, sandboxes: "leave" } });
  });
});
