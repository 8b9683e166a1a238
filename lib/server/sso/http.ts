import "server-only";
import { sessionCookieName, encodeSessionJwt } from "../session-cookie";

/** A 303 to a path on Baton, with cookies. */
export function redirectTo(location: string, setCookies: string[] = []): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const c of setCookies) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}

/** The session cookie for an SSO session: next-auth's JWT format, as long as the session row. */
export async function ssoSessionCookie(token: string, maxAgeSeconds: number, secure: boolean): Promise<string> {
  const jwt = await encodeSessionJwt(token, maxAgeSeconds);
  const expires = new Date(Date.now() + maxAgeSeconds * 1000).toUTCString();
  return `${sessionCookieName(secure)}=${jwt}; Path=/; Expires=${expires}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
}

/** /login with an SSO error code (the page words it with lib/sso-messages.ts). */
export function loginWithError(code: string, team?: string | null): string {
  const q = new URLSearchParams({ sso_error: code });
  if (team) q.set("sso_team", team);
  return `/login?${q}`;
}
