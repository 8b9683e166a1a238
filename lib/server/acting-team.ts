import "server-only";
import type { Connection } from "./db/connections";
import type { Membership, Role, Team } from "./db/teams";

// Which team a request acts in, decided once per request and in this one place: the role that
// route(), the pages and the terminal relay check, and the connection the request reaches the
// orkestr API with, always come from the same team. A role of one team never authorizes a request
// that goes through another team's connection (issue 20 item 2).
//
// The rules:
// - A request that names its team (`requested`: the URL's team, once the console has per-tab team
//   switching) acts in that team, and only if the user is a member of it.
// - Otherwise it acts in the team of the user's active connection, when the user is a member of
//   it; else in their oldest team. Choosing the active connection is how a user picks the team
//   they work in until then.
// - The connection is one bound to that team: the active connection when it is, else the most
//   recently changed connection of that team; else none (a 409 that says why).
// - A connection is bound to the team it was made in (`teamId`). One made without a team (older
//   rows, or made by a user who had none) counts as bound to the user's team only while they belong
//   to exactly one; with several it is ambiguous, and not used. A connection bound to a team the
//   user is not (or no longer) a member of is never used.

/** What the console's own session check knows of the user (lib/server/auth.ts CurrentUser). */
export interface UserTeamsAndConnections {
  user: { id: string };
  /** Oldest membership first. */
  memberships: ReadonlyArray<{ team: Team; membership: Membership }>;
  /** The user's connections (rows without their token). */
  connections: readonly Connection[];
}

/** The team a request acts in, the user's role there, and the connection it goes through. */
export interface ActingTeam {
  userId: string;
  team: Team;
  role: Role;
  /** The connection bound to this team that the request uses, or null (see `noConnection`). */
  connection: Connection | null;
  /** Why there is no connection, said to the user (what to do included); null when there is one. */
  noConnection: string | null;
}

/** A team asked for by the request itself (by id), instead of the active connection's. */
export interface TeamRequest {
  teamId: string;
}

/**
 * The team a connection is bound to for this user: its own `teamId`, or for a connection made
 * without a team, the user's one team (null when they have none or several: ambiguous).
 */
export function boundTeamId(current: UserTeamsAndConnections, connection: Connection): string | null {
  if (connection.teamId !== null) return connection.teamId;
  return current.memberships.length === 1 ? current.memberships[0]!.team.id : null;
}

function membershipIn(current: UserTeamsAndConnections, teamId: string | null) {
  return teamId === null ? undefined : current.memberships.find((m) => m.team.id === teamId);
}

const ADD_ONE = "Add one in Settings → Connections (base URL and token), or use the local engine.";

function whyNoConnection(current: UserTeamsAndConnections, team: Team): string {
  const active = current.connections.find((c) => c.isActive);
  if (!active) return `You have no orkestr connection for ${team.name} yet. ${ADD_ONE}`;
  const bound = boundTeamId(current, active);
  const where =
    bound === null
      ? "was made without a team, and you belong to several, so Baton cannot tell whose it is"
      : membershipIn(current, bound)
        ? `belongs to another of your teams (${membershipIn(current, bound)!.team.name})`
        : "belongs to a team you are no longer a member of";
  return (
    `Your active connection "${active.name}" ${where}, and ${team.name} has no connection of yours. ` +
    `Make a connection of ${team.name} active, or remove that one and add a new one in Settings → Connections.`
  );
}

/** The connection a request acting in `team` uses: the active one when it is bound to the team, else the latest bound one. */
function connectionOf(current: UserTeamsAndConnections, team: Team): Connection | null {
  const bound = current.connections.filter((c) => boundTeamId(current, c) === team.id);
  return (
    bound.find((c) => c.isActive) ??
    bound.sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || (a.id < b.id ? 1 : -1))[0] ??
    null
  );
}

/**
 * The team this request acts in, with the role and the connection, or null when the user is in
 * no team (or is not a member of the requested one): then every team permission is refused.
 */
export function resolveActingTeam(current: UserTeamsAndConnections, requested?: TeamRequest): ActingTeam | null {
  let chosen: { team: Team; membership: Membership } | undefined;
  if (requested) {
    chosen = membershipIn(current, requested.teamId);
  } else {
    const active = current.connections.find((c) => c.isActive);
    chosen = (active && membershipIn(current, boundTeamId(current, active))) ?? current.memberships[0];
  }
  if (!chosen) return null;
  const connection = connectionOf(current, chosen.team);
  return {
    userId: current.user.id,
    team: chosen.team,
    role: chosen.membership.role,
    connection,
    noConnection: connection ? null : whyNoConnection(current, chosen.team),
  };
}

/**
 * The team one of the user's connections is governed by, with the role there (connection routes:
 * the role that may activate, replace or remove it is the one in its own team). Null when the
 * connection is bound to no team of the user's (ambiguous, or a team they left).
 */
export function teamOfConnection(current: UserTeamsAndConnections, connection: Connection): ActingTeam | null {
  const teamId = boundTeamId(current, connection);
  return teamId === null ? null : resolveActingTeam(current, { teamId });
}
