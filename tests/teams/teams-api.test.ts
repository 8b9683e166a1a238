import "server-only";
import { describe, expect, it } from "vitest";
import { GET as listTeams, MAX_OWNED_TEAMS, POST as createTeam } from "../../app/api/teams/route";
import { GET as me } from "../../app/api/me/route";
import { listAuditEvents } from "../../lib/server/db/audit";
import { createTeamWithOwner, listMembershipsForUser, slugify } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { jsonOf, makeUser, noParams, request, sessionCookie, uniq, useConsoleDb } from "../console/helpers";

describe.each(testBackends)("/api/teams on $name", (backend) => {
  const ctx = useConsoleDb(backend);

  it("creates a team from a name (slug made from it, unique), with the creator as owner, audited", async () => {
    const { user } = await makeUser(ctx.db(), "viewer"); // a viewer elsewhere may still found a team
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const name = `Acme ${uniq("x")}`;
    const post = (n: string) =>
      createTeam(request("/api/teams", { method: "POST", cookie, body: { name: n } }), noParams);
    const first = await post(name);
    expect(first.status).toBe(201);
    const { team } = (await jsonOf(first)) as { team: { id: string; slug: string; role: string; name: string } };
    expect(team).toMatchObject({ name, slug: slugify(name), role: "owner" });
    const second = await post(name);
    expect(second.status).toBe(201);
    expect(((await jsonOf(second)) as { team: { slug: string } }).team.slug).toBe(`${slugify(name)}-2`);
    const memberships = await listMembershipsForUser(ctx.db(), user.id);
    expect(memberships.find((m) => m.team.id === team.id)?.membership.role).toBe("owner");

    const events = await listAuditEvents(ctx.db(), { teamId: team.id });
    expect(events.map((e) => e.action)).toContain("team.create");

    const list = await listTeams(request("/api/teams", { cookie }), noParams);
    const body = (await jsonOf(list)) as { teams: Array<{ slug: string; role: string; acting: boolean }> };
    expect(body.teams.map((t) => t.slug)).toEqual(expect.arrayContaining([team.slug]));
    expect(body.teams.filter((t) => t.acting)).toHaveLength(1);
  });

  it("refuses an empty name (422) and a 21st owned team (409 team_limit)", async () => {
    const { user } = await makeUser(ctx.db(), "owner");
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const empty = await createTeam(request("/api/teams", { method: "POST", cookie, body: { name: "  " } }), noParams);
    expect(empty.status).toBe(422);
    for (let i = 1; i < MAX_OWNED_TEAMS; i++)
      await createTeamWithOwner(ctx.db(), { name: "T", slug: slugify(uniq("owned")), ownerId: user.id });
    const over = await createTeam(
      request("/api/teams", { method: "POST", cookie, body: { name: "One more" } }),
      noParams,
    );
    expect(over.status).toBe(409);
    expect(await jsonOf(over)).toMatchObject({ code: "team_limit" });
  });

  it("answers in the team the request names, and 404 team_not_found for a team one is not a member of", async () => {
    const a = await makeUser(ctx.db(), "owner");
    const b = await makeUser(ctx.db(), "owner");
    const { cookie } = await sessionCookie(ctx.db(), b.user.id);
    const memberships = await listMembershipsForUser(ctx.db(), a.user.id);
    const slugA = memberships[0]!.team.slug;
    const slugB = (await listMembershipsForUser(ctx.db(), b.user.id))[0]!.team.slug;
    const mine = await me(request("/api/me", { cookie, headers: { "x-baton-team": slugB } }), noParams);
    expect(mine.status).toBe(200);
    expect(await jsonOf(mine)).toMatchObject({ active_team_id: b.teamId });
    for (const named of [
      { headers: { "x-baton-team": slugA } },
      { query: `?team=${slugA}` },
      { query: "?team=no-such-team" },
    ]) {
      const res = await me(
        request(`/api/me${"query" in named ? named.query : ""}`, {
          cookie,
          headers: "headers" in named ? named.headers : {},
        }),
        noParams,
      );
      expect(res.status).toBe(404);
      expect(await jsonOf(res)).toMatchObject({ code: "team_not_found" });
    }
    // The remembered default never overrides a named team, and applies only without one.
    const byCookie = await me(request("/api/me", { cookie: `${cookie}; baton_last_team=${slugA}` }), noParams);
    expect(await jsonOf(byCookie)).toMatchObject({ active_team_id: b.teamId });
  });
});
