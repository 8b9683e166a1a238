import "server-only";
import { isIP } from "node:net";
import { isHttps } from "../security-headers";

// What the server knows about a request's client: its address (for rate limits and the audit log),
// its user agent (for the sessions list), and whether it came over HTTPS (for cookie flags).

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(source: HeaderSource, name: string): string | null {
  if (source instanceof Headers) return source.get(name);
  const value = source[name] ?? source[name.toLowerCase()];
  if (Array.isArray(value)) return value.join(", ");
  return value ?? null;
}

/**
 * The request header carrying the client's address, written by the console's own server
 * (lib/server/front-door.ts, run by scripts/console-server.mjs) from the socket, or from the
 * trusted hops of X-Forwarded-For (BATON_TRUSTED_PROXIES). The front door deletes any value a
 * client sent before writing its own.
 */
export const CLIENT_IP_HEADER = "x-baton-client-ip";

const FRONT_DOOR = Symbol.for("baton.front-door");
type Marked = typeof globalThis & { [FRONT_DOOR]?: boolean };

/**
 * Called once by the front door when it is set up: from then on this process's requests have
 * passed through it, so CLIENT_IP_HEADER is the server's own. Without it (`next dev`, a plain
 * `next start`) nothing in a request says who the client is.
 */
export function markFrontDoor(on = true): void {
  (globalThis as Marked)[FRONT_DOOR] = on;
}

/** Whether this process's requests pass through the front door (see markFrontDoor()). */
export function behindFrontDoor(): boolean {
  return (globalThis as Marked)[FRONT_DOOR] === true;
}

/** A valid IPv4 or IPv6 address, "::ffff:1.2.3.4" as "1.2.3.4" (one client, one key), else null. */
export function normalizeAddress(value: string | null | undefined): string | null {
  const candidate = (value ?? "").trim().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1");
  return candidate && isIP(candidate) ? candidate.toLowerCase() : null;
}

/**
 * The client's IP address (for rate limits, sessions and the audit log): what the front door wrote
 * into CLIENT_IP_HEADER, never X-Forwarded-For or X-Real-IP as the client sent them. Without the
 * front door it is null: every such request then shares the one "unknown" bucket of the per-IP
 * sign-in limit, which is strict rather than bypassable.
 */
export function clientIp(headers: HeaderSource): string | null {
  if (!behindFrontDoor()) return null;
  return normalizeAddress(header(headers, CLIENT_IP_HEADER));
}

export function userAgent(headers: HeaderSource): string | null {
  return header(headers, "user-agent")?.slice(0, 512) ?? null;
}

/** Whether the client reached us over HTTPS (directly, or through a TLS-terminating proxy). */
export function isSecureRequest(req: Request): boolean {
  let protocol = "http:";
  try {
    protocol = new URL(req.url).protocol;
  } catch {
    // a relative URL cannot happen in Next; keep http
  }
  return isHttps(req.headers.get("x-forwarded-proto"), protocol);
}
