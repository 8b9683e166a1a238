import "server-only";
import type { Connection } from "./db/connections";
import type { Membership, Role, Team } from "./db/teams";

// Which team a request acts in, decided once per request and in this one place: the role that
// route(), the pages and the terminal relay check, and the connection the request reaches the
// orkestr API with, always come from the same team. A role of one team never authorizes a request
// that goes through another team's connection (issue 20 item 2).
//
// The rules:
// - A request that names its team acts in that team, and only if the user is a member of it. The
//   browser names it per tab: the page URL's `?team=<slug>` (lib/team-param.ts), sent by the API
//   client as the X-Baton-Team header and passed to server components by proxy.ts. A slug the user
//   is not a member of, or that does not exist, is the same answer: 404 team_not_found (never
//   another team instead, and never a hint that the team exists).
// - A request that names no team acts in the user's default team: the team last worked in (the
//   `baton_last_team` cookie, only a default for URLs without a team) when they are still a member;
//   else the team of their active connection; else their oldest team. There is no server-side
//   "current team" that one tab could change behind another.
// - The connection is one bound to that team: the active connection when it is, else the most
//   recently changed (activated, re-tokened) connection of that team; else none (a 409 that says
//   why). Activating a connection never switches the team: it only picks that team's connection.
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
  /** The personal API token the request was made with (lib/server/api-tokens/bearer.ts), and its own limits. */
  apiToken?: ActingApiToken;
}

export interface ActingApiToken {
  id: string;
  name: string;
  /** Its monthly spend cap in whole micro-euros; null: none. */
  spendCapMicro: number | null;
  /** The most sandboxes made with it that may exist at once; null: no limit. */
  maxConcurrent: number | null;
}

/** A team asked for by the request itself (by id), instead of the default one. */
export interface TeamRequest {
  teamId: string;
}

/** How a request names its team: the URL's slug (header or query), and the remembered default. */
export interface TeamChoice {
  /** The team the request names (`?team=` / X-Baton-Team), or null/undefined when it names none. */
  slug?: string | null;
  /** The `baton_last_team` cookie: the default for a request that names no team. */
  lastSlug?: string | null;
}

/** The request named a team the user is not a member of (or that does not exist): 404 team_not_found. */
export class TeamNotFoundError extends Error {
  readonly code = "team_not_found";
  readonly status = 404;
  readonly detail: string;
  constructor(slug: string) {
    super(`team not found: ${slug}`);
    this.name = "TeamNotFoundError";
    this.detail =
      "This team does not exist, or you are not a member of it. Ask a team owner or admin for an invitation.";
  }
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
  const unbound = current.connections.some((c) => c.teamId === null) && current.memberships.length > 1;
  return (
    `You have no orkestr connection for ${team.name} yet. ${ADD_ONE}` +
    (unbound
      ? " (A connection made without a team cannot be used while you belong to several teams: remove it and add it again in the right team.)"
      : "")
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
  const chosen = requested ? membershipIn(current, requested.teamId) : defaultMembership(current, null);
  if (!chosen) return null;
  return actingIn(current, chosen);
}

/** The membership a request that names no team acts in: the last team, else the active connection's, else the oldest. */
function defaultMembership(
  current: UserTeamsAndConnections,
  lastSlug: string | null | undefined,
): { team: Team; membership: Membership } | undefined {
  const last = lastSlug ? current.memberships.find((m) => m.team.slug === lastSlug) : undefined;
  if (last) return last;
  const active = current.connections.find((c) => c.isActive);
  return (active && membershipIn(current, boundTeamId(current, active))) ?? current.memberships[0];
}

/**
 * The team a request acts in from how it names it (TeamChoice): the named team for a member
 * (TeamNotFoundError otherwise, whether it exists or not), else the default team; null for a user
 * in no team who names none.
 */
export function resolveTeamChoice(current: UserTeamsAndConnections, choice: TeamChoice = {}): ActingTeam | null {
  if (choice.slug) {
    const named = current.memberships.find((m) => m.team.slug === choice.slug);
    if (!named) throw new TeamNotFoundError(choice.slug);
    return actingIn(current, named);
  }
  const chosen = defaultMembership(current, choice.lastSlug);
  return chosen ? actingIn(current, chosen) : null;
}

/** The default team's slug for URLs that name none (null: the user is in no team). */
export function defaultTeamSlug(current: UserTeamsAndConnections, lastSlug?: string | null): string | null {
  return defaultMembership(current, lastSlug)?.team.slug ?? null;
}

function actingIn(current: UserTeamsAndConnections, chosen: { team: Team; membership: Membership }): ActingTeam {
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
