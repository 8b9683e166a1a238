import { NextResponse, type NextRequest } from "next/server";
import { HOST_NOT_ALLOWED, hostAllowed } from "./lib/host-policy";
import { REQUEST_PATH_HEADER, contentSecurityPolicy, isHttps, newNonce, securityHeaders } from "./lib/security-headers";
import { LAST_TEAM_COOKIE, readTeamParam, validTeamSlug } from "./lib/team-param";

/**
 * Headers only this proxy may set: a copy sent by a client is dropped before anything reads it.
 * PAGE_TEAM_HEADER carries the page URL's `?team=` to server components (lib/server/auth.ts).
 */
export const PAGE_TEAM_HEADER = "x-baton-page-team";
const INTERNAL_HEADERS = ["x-nonce", REQUEST_PATH_HEADER, PAGE_TEAM_HEADER] as const;

/**
 * Next 16's network boundary (the file convention formerly called middleware.ts): a fresh CSP nonce
 * and the security headers on every matched request. It is NEVER an authentication or authorization
 * layer: pages and route handlers check the session themselves.
 *
 * The nonce reaches rendering twice over: Next reads it from the request's Content-Security-Policy
 * header and stamps its own scripts with it, and the root layout reads `x-nonce` for our one inline
 * script (the pre-paint theme script).
 *
 * It also passes the requested path on (REQUEST_PATH_HEADER), so that a server component sending a
 * visitor to /login can add `?next=` — the session check itself happens there, not here; and the
 * page URL's team (`?team=<slug>`, PAGE_TEAM_HEADER), which the page checks membership of. A page
 * opened with a team is remembered in the `baton_last_team` cookie: only the default team of a URL
 * that names none, never what another tab acts in. Internal headers a client sent are dropped.
 */
export function proxy(request: NextRequest) {
  const nonce = newNonce();
  const csp = contentSecurityPolicy(nonce, { dev: process.env.NODE_ENV === "development" });
  const https = isHttps(request.headers.get("x-forwarded-proto"), request.nextUrl.protocol);

  // A Host name Baton does not serve (DNS rebinding: evil.example resolving to 127.0.0.1): 421,
  // JSON for the API, a plain page otherwise. The console's own server refuses these before Next
  // sees them; this covers `next dev` and `next start`. Route handlers check again (route()).
  if (!hostAllowed(request.headers.get("host"))) {
    const misdirected = request.nextUrl.pathname.startsWith("/api/")
      ? NextResponse.json(HOST_NOT_ALLOWED, { status: 421 })
      : new NextResponse(`421 Misdirected Request\n\n${HOST_NOT_ALLOWED.detail}\n`, {
          status: 421,
          headers: { "content-type": "text/plain; charset=utf-8" },
        });
    misdirected.headers.set("cache-control", "no-store");
    for (const [name, value] of Object.entries(securityHeaders(csp, { https }))) misdirected.headers.set(name, value);
    return misdirected;
  }

  const requestHeaders = new Headers(request.headers);
  for (const name of INTERNAL_HEADERS) requestHeaders.delete(name);
  requestHeaders.set("x-nonce", nonce);
  requestHeaders.set("content-security-policy", csp);
  const path = request.nextUrl.clone();
  path.searchParams.delete("_rsc"); // the client router's cache-busting parameter is not part of the page
  requestHeaders.set(REQUEST_PATH_HEADER, `${path.pathname}${path.search}`);
  const isApi = request.nextUrl.pathname.startsWith("/api/");
  const pageTeam = isApi ? null : readTeamParam(request.nextUrl.searchParams);
  if (pageTeam !== null) requestHeaders.set(PAGE_TEAM_HEADER, pageTeam);

  const response = NextResponse.next({ request: { headers: requestHeaders } });
  const remembered = validTeamSlug(pageTeam);
  if (remembered && request.cookies.get(LAST_TEAM_COOKIE)?.value !== remembered) {
    response.cookies.set(LAST_TEAM_COOKIE, remembered, {
      path: "/",
      sameSite: "lax",
      httpOnly: true,
      secure: https,
      maxAge: 60 * 60 * 24 * 365,
    });
  }
  for (const [name, value] of Object.entries(securityHeaders(csp, { https }))) response.headers.set(name, value);
  return response;
}

export const config = {
  matcher: [
    // Everything but build assets (immutable files that need no per-request headers) and the
    // routes that take request bodies: Next clones the body of every request the proxy sees into
    // memory, waits for all of it, and silently cuts it at 10 MB (proxyClientMaxBodySize). That
    // would truncate the sandbox file uploads (files/raw streams up to the upstream's max_bytes;
    // files and files/batch take 14 and 36 MB of JSON), and would read a stranger's body to the
    // public webhook receiver (/api/hooks/<id>, any id but the events and receivers routes beside
    // it) before the receiver is looked up. Those routes are JSON or attachment responses.
    "/((?!_next/static|_next/image|favicon.ico|api/v1/sandboxes/[^/]+/files|api/hooks/(?!events(?:/|$)|receivers(?:/|$))[^/]+$).*)",
  ],
};
