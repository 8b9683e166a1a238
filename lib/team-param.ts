// The team a console URL is about: `?team=<slug>` on every console page, so that a link pasted to a
// teammate opens the same team's page, and each browser tab keeps its own team (the switch is the
// URL, never a server-side "current team"). Pure functions, for the browser and the server alike.
//
// The browser's API client sends the page's team as TEAM_HEADER (lib/api/core.ts); the server
// resolves and checks it (lib/server/acting-team.ts). Streams that cannot send a header (EventSource,
// WebSocket) carry it in their URL as TEAM_PARAM instead.

/** The query parameter of console URLs that names the team. */
export const TEAM_PARAM = "team";
/** The request header the browser's API client names the page's team with. */
export const TEAM_HEADER = "x-baton-team";
/** The cookie that remembers the team last worked in: only a default for URLs without a team. */
export const LAST_TEAM_COOKIE = "baton_last_team";

/** A team slug as lib/server/db/teams.ts allows them (lowercase letters, digits, inner dashes; ≤ 48). */
export const TEAM_SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$/;

/** The slug when it is well-formed, else null. */
export function validTeamSlug(value: string | null | undefined): string | null {
  return typeof value === "string" && TEAM_SLUG_PATTERN.test(value) ? value : null;
}

/**
 * The team named by a URL or query string (`/sandboxes?team=acme`, `?team=acme`, a URL, or
 * URLSearchParams): the raw value, or null when there is none. A malformed value is returned as is
 * (so the server can answer "not found" for it instead of silently acting in another team).
 */
export function readTeamParam(from: string | URL | URLSearchParams | null | undefined): string | null {
  if (from === null || from === undefined) return null;
  let params: URLSearchParams;
  if (from instanceof URLSearchParams) params = from;
  else if (from instanceof URL) params = from.searchParams;
  else {
    const hashAt = from.indexOf("#");
    const beforeHash = hashAt < 0 ? from : from.slice(0, hashAt);
    const q = beforeHash.indexOf("?");
    if (q < 0) return null;
    params = new URLSearchParams(beforeHash.slice(q + 1));
  }
  const value = params.get(TEAM_PARAM);
  return value === null || value === "" ? null : value;
}

/**
 * `href` with `?team=<slug>` set (replacing any team it had), its path, other parameters and
 * fragment kept. Only same-origin paths (starting with one `/`) and bare queries are changed:
 * absolute URLs, protocol-relative ones and anything else are returned unchanged. A null slug
 * returns `href` unchanged.
 */
export function withTeam(href: string, slug: string | null | undefined): string {
  if (!slug) return href;
  const isPath = href.startsWith("/") && !href.startsWith("//");
  const isQuery = href.startsWith("?");
  if (!isPath && !isQuery && href !== "") return href;
  const hashAt = href.indexOf("#");
  const hash = hashAt < 0 ? "" : href.slice(hashAt);
  const beforeHash = hashAt < 0 ? href : href.slice(0, hashAt);
  const q = beforeHash.indexOf("?");
  const pathname = q < 0 ? beforeHash : beforeHash.slice(0, q);
  const params = new URLSearchParams(q < 0 ? "" : beforeHash.slice(q + 1));
  params.set(TEAM_PARAM, slug);
  return `${pathname}?${params.toString()}${hash}`;
}

/** `href` without its team parameter (other parameters and the fragment kept). */
export function withoutTeam(href: string): string {
  const hashAt = href.indexOf("#");
  const hash = hashAt < 0 ? "" : href.slice(hashAt);
  const beforeHash = hashAt < 0 ? href : href.slice(0, hashAt);
  const q = beforeHash.indexOf("?");
  if (q < 0) return href;
  const params = new URLSearchParams(beforeHash.slice(q + 1));
  params.delete(TEAM_PARAM);
  const rest = params.toString();
  return `${beforeHash.slice(0, q)}${rest ? `?${rest}` : ""}${hash}`;
}

/** Sections whose sub-pages name one resource of a team (`/sandboxes/<id>`): not kept across a switch. */
const RESOURCE_SECTIONS = new Set(["sandboxes", "snapshots", "templates", "volumes", "webhooks", "events"]);

/**
 * Where switching to team `slug` goes from `here` (the tab's path and query): the same page in the
 * other team; a page of one resource (`/sandboxes/<id>/files`) goes to its section's list, since
 * that resource is the old team's. Query parameters other than the team are kept on the same page.
 */
export function switchTeamHref(here: string, slug: string): string {
  const path = here.split(/[?#]/, 1)[0] || "/";
  const segments = path.split("/").filter(Boolean);
  if (segments.length > 1 && RESOURCE_SECTIONS.has(segments[0]!) && segments[1] !== "new")
    return withTeam(`/${segments[0]}`, slug);
  return withTeam(withoutTeam(here.split("#", 1)[0]!), slug);
}
