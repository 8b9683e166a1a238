import "server-only";
import { cookies, headers } from "next/headers";
import { notFound, redirect } from "next/navigation";
import { cache } from "react";
import { hostAllowed } from "../host-policy";
import { safeNextPath } from "../safe-next-path";
import { REQUEST_PATH_HEADER } from "../security-headers";
import { recordAudit } from "./db/audit";
import { getMigratedDb, type Db } from "./db/index";
import {
  findValidSession,
  revokeAllSessionsForUser,
  revokeSessionById,
  touchSession,
  type Session,
} from "./db/sessions";
import { LAST_TEAM_COOKIE, readTeamParam, TEAM_HEADER, withTeam } from "../team-param";
import { defaultTeamSlug, resolveTeamChoice, TeamNotFoundError, type ActingTeam, type TeamChoice } from "./acting-team";
import { AppError } from "./errors";
import { listConnections, type Connection } from "./db/connections";
import { isFirstRun } from "./db/setup";
import { listMembershipsForUser, type Membership, type Team } from "./db/teams";
import type { User } from "./db/users";
import { actingCan, type Permission } from "./rbac";
import { cachedSession } from "./session-cache";
import { parseCookieHeader, readSessionId, type CookieEntry } from "./session-cookie";

// Who is asking: the one server-side session check behind every page and API route. The cookie is
// next-auth's JWT (lib/server/next-auth.ts); it only names a session (`sid`), and the session row
// decides: revoked, expired, or a disabled user → no session, whatever the cookie says.

/**
 * How a request proved who it is: the session cookie, or a personal API token (only on /api/v1,
 * lib/server/api-tokens/bearer.ts), which then also fixes the team and narrows the role. Audit rows
 * name it (`credential`), and the SDK and MCP paths build on it.
 */
export type Via = { kind: "session" } | { kind: "token"; tokenId: string; tokenName: string; scope: "read" | "write" };

export interface CurrentUser {
  user: User;
  /** The session row; null for a request made with an API token (then `via` names the token). */
  session: Session | null;
  via: Via;
  /** The user's teams and roles, oldest membership first. */
  memberships: Array<{ team: Team; membership: Membership }>;
  /**
   * The user's orkestr connections, without their tokens: which one a request uses is decided with
   * the team (lib/server/acting-team.ts), from the same read as the memberships.
   */
  connections: Connection[];
}

/** How often a session's last_seen_at is written (a read-mostly check stays a read). */
export const TOUCH_INTERVAL_MS = 60_000;

/** The live session behind a `sid` with its user, memberships and connections, or null. Records activity once a minute. */
export async function resolveSession(
  db: Db,
  sid: string,
  now = Date.now(),
): Promise<(CurrentUser & { session: Session }) | null> {
  const found = await findValidSession(db, sid, { now });
  if (!found) return null;
  let session = found.session;
  if (now - session.lastSeenAt.getTime() >= TOUCH_INTERVAL_MS) {
    await touchSession(db, session.id, { now, minIntervalMs: TOUCH_INTERVAL_MS });
    session = { ...session, lastSeenAt: new Date(now) };
  }
  const [memberships, connections] = await Promise.all([
    listMembershipsForUser(db, found.user.id),
    listConnections(db, found.user.id),
  ]);
  return { user: found.user, session, via: { kind: "session" }, memberships, connections };
}

/**
 * The request's session: from the short-lived session memory (lib/server/session-cache.ts, which
 * any revocation in this process empties at once) or the database.
 */
async function currentFromCookies(list: CookieEntry[]): Promise<CurrentUser | null> {
  const sid = await readSessionId(list);
  if (!sid) return null;
  const db = await getMigratedDb();
  return cachedSession(
    db,
    sid,
    () => resolveSession(db, sid),
    (current) => current.session?.expiresAt.getTime() ?? 0,
  );
}

/**
 * The session of a signed-in request. The console's own routes (everything outside /api/v1) are
 * reached only with the session cookie, so there it is always set; a request made with an API token
 * has none and is refused as not signed in.
 */
export function sessionOf(current: CurrentUser): Session {
  if (current.session) return current.session;
  throw new AppError("unauthorized", "This needs a signed-in session; an API token cannot do it.");
}

/** One key per credential (the session, or the API token): what per-credential counters count by. */
export function credentialKey(current: CurrentUser): string {
  return current.via.kind === "token" ? `token:${current.via.tokenId}` : (current.session?.id ?? "none");
}

/** The signed-in user of a route handler's request (API routes go through lib/server/route.ts). */
export function getUserFromRequest(req: Request): Promise<CurrentUser | null> {
  return currentFromCookies(parseCookieHeader(req.headers.get("cookie")));
}

/**
 * The signed-in user of the current server component render, or null. Memoised per request, so the
 * layout and the page share one check. A request for a Host name Baton does not serve (DNS
 * rebinding, lib/host-policy.ts) has no user, whatever it carries: the console's server and
 * proxy.ts answer those with 421 first, and this keeps pages from rendering data if they did not.
 */
export const getCurrentUser = cache(async (): Promise<CurrentUser | null> => {
  if (!hostAllowed((await headers()).get("host"))) return null;
  const jar = await cookies();
  return currentFromCookies(jar.getAll().map(({ name, value }) => ({ name, value })));
});

/**
 * The header proxy.ts passes server components the page URL's `?team=` in (it strips any copy a
 * client sent). Pages read their team from here, never from a client-sent header.
 */
export const PAGE_TEAM_HEADER = "x-baton-page-team"; // proxy.ts's own constant of the same name

/**
 * How an API request names its team: the X-Baton-Team header the browser's API client sends (the
 * page's `?team=`), else the request URL's own `?team=` (EventSource and WebSocket URLs, which
 * cannot carry a header); the `baton_last_team` cookie is the default for a request naming none.
 */
export function teamChoiceOf(req: Request): TeamChoice {
  const header = req.headers.get(TEAM_HEADER);
  const slug = header !== null && header !== "" ? header : readTeamParam(new URL(req.url));
  const lastSlug = parseCookieHeader(req.headers.get("cookie")).find((c) => c.name === LAST_TEAM_COOKIE)?.value;
  return { slug, lastSlug: lastSlug ?? null };
}

/** The page's team choice (server components): proxy.ts's PAGE_TEAM_HEADER, and the last-team cookie. */
export async function pageTeamChoice(): Promise<TeamChoice> {
  const slug = (await headers()).get(PAGE_TEAM_HEADER);
  const lastSlug = (await cookies()).getAll().find((c) => c.name === LAST_TEAM_COOKIE)?.value ?? null;
  return { slug: slug || null, lastSlug };
}

/** 404 team_not_found, as route() answers it. */
export function teamNotFound(err: TeamNotFoundError): AppError {
  return new AppError("team_not_found", err.detail);
}

/**
 * The team a request or page acts in, the user's role and the connection it goes through,
 * all from one resolution (lib/server/acting-team.ts); null for a user without a team. A choice
 * naming a team the user is not a member of throws TeamNotFoundError.
 */
export function actingTeam(current: CurrentUser, choice: TeamChoice = {}): ActingTeam | null {
  return resolveTeamChoice(current, choice);
}

/**
 * The acting team of the page being rendered: the URL's team (the 404 page when the user is not a
 * member of it, or it does not exist), else the default team. Memoised per request.
 */
export const pageActingTeam = cache(async (current: CurrentUser): Promise<ActingTeam | null> => {
  try {
    return actingTeam(current, await pageTeamChoice());
  } catch (err) {
    if (err instanceof TeamNotFoundError) notFound();
    throw err;
  }
});

/**
 * For console pages: the URL must say which team. A page requested without `?team=` is sent to
 * the same URL with the user's default team added (a user in no team stays where they are). Then
 * the page's acting team, as pageActingTeam().
 */
export async function requireTeam(current: CurrentUser): Promise<ActingTeam | null> {
  const choice = await pageTeamChoice();
  if (!choice.slug) {
    const slug = defaultTeamSlug(current, choice.lastSlug);
    const here = safeNextPath((await headers()).get(REQUEST_PATH_HEADER));
    if (slug && here) redirect(withTeam(here, slug));
  }
  return pageActingTeam(current);
}

/** A same-origin path to come back to after signing in, or null: the one check, lib/safe-next-path.ts. */
export { safeNextPath };

export function loginPath(next: string | null | undefined): string {
  const safe = safeNextPath(next);
  return safe && safe !== "/" && !safe.startsWith("/login") ? `/login?next=${encodeURIComponent(safe)}` : "/login";
}

/**
 * For server components: the signed-in user, or a redirect — to /setup while Baton has no user yet,
 * else to /login?next=<this page>.
 */
export async function requireUser(): Promise<CurrentUser> {
  const current = await getCurrentUser();
  if (current) return current;
  if (await isFirstRun(await getMigratedDb())) redirect("/setup");
  redirect(loginPath((await headers()).get(REQUEST_PATH_HEADER)));
}

/** What a page may show: the user and team when their role grants the permission, else why not. */
export type PageAccess =
  { ok: true; current: CurrentUser; team: ActingTeam } | { ok: false; current: CurrentUser; detail: string };

/**
 * For server components whose data an API route serves under `permission`: the same check as
 * route({ perm }) (and the same words), so a page never shows what its API would refuse with 403.
 * The team, role and connection are the API's too (actingTeam()): the page reads through
 * `team.connection`, never another one. Signed out → the requireUser() redirects. On `ok: false`
 * the page renders <Forbidden> and reads nothing.
 */
export async function requirePermission(permission: Permission): Promise<PageAccess> {
  const current = await requireUser();
  const team = await requireTeam(current);
  if (team && actingCan(team, permission)) return { ok: true, current, team };
  return { ok: false, current, detail: refusal(team, permission) };
}

/** Why `team` (the acting team, or none) does not grant `permission`: the words route() answers 403 with. */
export function refusal(team: ActingTeam | null, permission: Permission): string {
  return team
    ? `Your role in ${team.team.name} (${team.role}) does not allow this (${permission}).`
    : `You are not a member of a team, so you cannot do this (${permission}).`;
}

async function audit(db: Db, input: Parameters<typeof recordAudit>[1]): Promise<void> {
  try {
    await recordAudit(db, input);
  } catch (err) {
    console.error("[baton] could not record an audit event:", err);
  }
}

/** Sign out: revokes this session server-side (the cookie is then worthless, even if kept). */
export async function signOut(current: CurrentUser, info: { ip: string | null }): Promise<void> {
  const db = await getMigratedDb();
  await revokeSessionById(db, sessionOf(current).id, current.user.id);
  await audit(db, { action: "auth.sign_out", userId: current.user.id, ip: info.ip });
}

/** Sign out everywhere: revokes every session of the user, this one included. Returns how many. */
export async function signOutEverywhere(current: CurrentUser, info: { ip: string | null }): Promise<number> {
  const db = await getMigratedDb();
  const revoked = await revokeAllSessionsForUser(db, current.user.id);
  await audit(db, {
    action: "auth.sign_out_everywhere",
    userId: current.user.id,
    ip: info.ip,
    data: { sessions_revoked: revoked },
  });
  return revoked;
}
