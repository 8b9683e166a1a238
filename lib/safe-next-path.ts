/**
 * Where to go after signing in (`/login?next=…`): a path on Baton's own origin, or null. The one
 * implementation for the login page (server-side redirect), loginPath() and the login form (a
 * client-side `location.assign`), so the browser and the server can never disagree again: no
 * server-only imports here.
 *
 * Refused, because a browser would leave Baton with them:
 * - anything not starting with one `/`: absolute URLs, `javascript:`, `//evil` (protocol-relative);
 * - a backslash anywhere (`/\evil`: browsers read `\` as `/` in http URLs);
 * - control characters anywhere, decoded or not: browsers drop tab, CR and LF from URLs, so
 *   `/<TAB>/evil` (`?next=/%09/evil`) is `//evil`;
 * - a path that decodes to `//…` or `/\…` (`/%2F%2Fevil`, `/%5Cevil`): harmless to a browser, but
 *   a proxy or framework that decodes before redirecting (trailing-slash rules) would make it one.
 * What passes is also resolved against a placeholder origin and must stay on it; the normalised
 * path, query and fragment are returned.
 */
export function safeNextPath(value: string | null | undefined): string | null {
  if (typeof value !== "string" || !value.startsWith("/") || value.length > 2048) return null;
  if (UNSAFE.test(value) || value.startsWith("//")) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(value.split(/[?#]/, 1)[0]!);
  } catch {
    return null; // a malformed escape: not a path Baton links to
  }
  if (UNSAFE.test(decoded) || decoded.startsWith("//")) return null;
  let url: URL;
  try {
    url = new URL(value, PLACEHOLDER);
  } catch {
    return null;
  }
  if (url.origin !== PLACEHOLDER) return null;
  return `${url.pathname}${url.search}${url.hash}`;
}

const PLACEHOLDER = "http://baton.invalid";
// C0 controls, DEL, and the backslash.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f\\]/;

/** The `next` parameter of a query string (`location.search`) as a safe path, or the fallback. */
export function nextPathFromSearch(search: string, fallback: `/${string}`): string {
  return safeNextPath(new URLSearchParams(search).get("next")) ?? fallback;
}
