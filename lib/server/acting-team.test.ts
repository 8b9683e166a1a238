import "server-only";
import { describe, expect, it } from "vitest";
import {
  boundTeamId,
  defaultTeamSlug,
  resolveActingTeam,
  resolveTeamChoice,
  TeamNotFoundError,
  teamOfConnection,
  type UserTeamsAndConnections,
} from "./acting-team";
import type { Connection } from "./db/connections";
import type { Role, Team } from "./db/teams";

// The one decision of which team a request acts in, and so whose role is checked and which
// connection is used (issue 20 item 2): always the same team for both.

const team = (id: string): Team => ({
  id,
  name: `Team ${id}`,
  slug: id,
  createdAt: new Date(0),
  spendCapEur: null,
  adminsManageBilling: false,
});
const member = (id: string, role: Role, at: number) => ({
  team: team(id),
  membership: { teamId: id, userId: "usr_1", role, createdAt: new Date(at) },
});
const conn = (id: string, teamId: string | null, opts: { active?: boolean; updated?: number } = {}): Connection => ({
  id,
  userId: "usr_1",
  teamId,
  name: `conn ${id}`,
  baseUrl: "https://api.example",
  tokenHint: "ork_…abcd",
  isActive: opts.active ?? false,
  createdAt: new Date(0),
  updatedAt: new Date(opts.updated ?? 0),
  lastCheckedAt: null,
  lastError: null,
  engineTokenId: null,
});
const user = (
  memberships: UserTeamsAndConnections["memberships"],
  connections: Connection[],
): UserTeamsAndConnections => ({ user: { id: "usr_1" }, memberships, connections });

describe("the acting team", () => {
  // Owner of B (the older membership), viewer of A.
  const twoTeams = [member("B", "owner", 1), member("A", "viewer", 2)];

  it("is the active connection's team, with the role there: a viewer of A acting through A's connection is a viewer", () => {
    const acting = resolveActingTeam(user(twoTeams, [conn("a", "A", { active: true }), conn("b", "B")]));
    expect(acting).toMatchObject({ team: { id: "A" }, role: "viewer", connection: { id: "a" } });
  });

  it("is the oldest team when the active connection belongs to no team of the user's, and then uses none of it", () => {
    const left = resolveActingTeam(user(twoTeams, [conn("x", "X", { active: true })]));
    expect(left).toMatchObject({ team: { id: "B" }, role: "owner", connection: null });
    expect(left!.noConnection).toMatch(/no orkestr connection for Team B/);
    // A connection of the oldest team is used instead of the unusable active one.
    const other = resolveActingTeam(user(twoTeams, [conn("x", "X", { active: true }), conn("b", "B")]));
    expect(other).toMatchObject({ team: { id: "B" }, connection: { id: "b" } });
  });

  it("never pairs a role with another team's connection, whatever is active", () => {
    for (const active of ["a", "b", "x", "n"]) {
      const connections = [
        conn("a", "A", { active: active === "a" }),
        conn("b", "B", { active: active === "b" }),
        conn("x", "X", { active: active === "x" }),
        conn("n", null, { active: active === "n" }),
      ];
      const acting = resolveActingTeam(user(twoTeams, connections))!;
      expect(acting.connection && boundTeamId(user(twoTeams, connections), acting.connection)).toBe(acting.team.id);
      expect(acting.role).toBe(acting.team.id === "A" ? "viewer" : "owner");
    }
  });

  it("a requested team (the URL's, later) is used only for a member, with that team's connection", () => {
    const current = user(twoTeams, [conn("a", "A"), conn("b", "B", { active: true })]);
    expect(resolveActingTeam(current, { teamId: "A" })).toMatchObject({ role: "viewer", connection: { id: "a" } });
    expect(resolveActingTeam(current, { teamId: "X" })).toBeNull();
  });

  it("prefers the active connection of the team, else its most recently changed one", () => {
    const current = user(
      [member("A", "member", 1)],
      [conn("old", "A", { updated: 1 }), conn("new", "A", { updated: 5 }), conn("b", "B", { active: true })],
    );
    expect(resolveActingTeam(current)?.connection?.id).toBe("new");
  });

  it("a connection made without a team counts as the user's one team, and as no team's once they have two", () => {
    const one = user([member("A", "member", 1)], [conn("n", null, { active: true })]);
    expect(resolveActingTeam(one)).toMatchObject({ team: { id: "A" }, connection: { id: "n" } });
    const two = user(twoTeams, [conn("n", null, { active: true })]);
    const acting = resolveActingTeam(two)!;
    expect(acting).toMatchObject({ team: { id: "B" }, connection: null });
    expect(acting.noConnection).toMatch(/made without a team cannot be used/);
    expect(teamOfConnection(two, two.connections[0]!)).toBeNull();
  });

  it("a user in no team acts in none (every team permission is refused)", () => {
    expect(resolveActingTeam(user([], [conn("n", null, { active: true })]))).toBeNull();
  });

  describe("named by the URL (?team=<slug>, X-Baton-Team)", () => {
    const current = user(twoTeams, [conn("a", "A"), conn("b", "B", { active: true })]);

    it("acts in the named team for a member, with that team's role and connection", () => {
      expect(resolveTeamChoice(current, { slug: "A" })).toMatchObject({
        team: { id: "A" },
        role: "viewer",
        connection: { id: "a" },
      });
      expect(resolveTeamChoice(current, { slug: "B" })).toMatchObject({ role: "owner", connection: { id: "b" } });
    });

    it("refuses a team the user is not a member of, and one that does not exist, the same way", () => {
      for (const slug of ["X", "nope", "../A", "A "]) {
        let thrown: unknown;
        try {
          resolveTeamChoice(current, { slug });
        } catch (err) {
          thrown = err;
        }
        expect(thrown).toBeInstanceOf(TeamNotFoundError);
        expect(thrown).toMatchObject({ code: "team_not_found", status: 404 });
        expect((thrown as TeamNotFoundError).detail).toBe(new TeamNotFoundError("A").detail);
      }
      // Even a user in no team: naming one is "not found", not "no team".
      expect(() => resolveTeamChoice(user([], []), { slug: "A" })).toThrow(TeamNotFoundError);
      // The remembered default never rescues a wrong named team.
      expect(() => resolveTeamChoice(current, { slug: "X", lastSlug: "A" })).toThrow(TeamNotFoundError);
    });

    it("without a named team: the last team (cookie) when still a member, else the active connection's, else the oldest", () => {
      expect(resolveTeamChoice(current, { lastSlug: "A" })?.team.id).toBe("A");
      expect(resolveTeamChoice(current, { lastSlug: "X" })?.team.id).toBe("B"); // left X: the active connection's
      expect(resolveTeamChoice(current)?.team.id).toBe("B");
      expect(resolveTeamChoice(user(twoTeams, []), {})?.team.id).toBe("B"); // oldest
      expect(resolveTeamChoice(user([], []), { lastSlug: "A" })).toBeNull();
      expect(defaultTeamSlug(current, "A")).toBe("A");
      expect(defaultTeamSlug(user([], []), null)).toBeNull();
    });

    it("activating a connection picks that team's connection, never the team: each tab keeps the team its URL names", () => {
      // The active connection is A's; a tab on team B still acts in B through B's latest connection.
      const activeInA = user(twoTeams, [
        conn("a", "A", { active: true }),
        conn("b1", "B", { updated: 1 }),
        conn("b2", "B", { updated: 9 }),
      ]);
      expect(resolveTeamChoice(activeInA, { slug: "B" })).toMatchObject({
        team: { id: "B" },
        connection: { id: "b2" },
      });
      expect(resolveTeamChoice(activeInA, { slug: "A" })).toMatchObject({ team: { id: "A" }, connection: { id: "a" } });
    });
  });
});
