import "server-only";
import { isHttps } from "../security-headers.js";

// What the server knows about a request's client: its address (for rate limits and the audit log),
// its user agent (for the sessions list), and whether it came over HTTPS (for cookie flags).

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(source: HeaderSource, name: string): string | null {
  if (source instanceof Headers) return source.get(name);
  const value = source[name] ?? source[name.toLowerCase()];
  if (Array.isArray(value)) return value.join(", ");
  return value ?? null;
}

const ADDRESS = /^[0-9A-Fa-f:.]{2,45}$/;

/**
 * The client's IP address: the first `X-Forwarded-For` hop, else `X-Real-IP`, else null. `next start`
 * fills X-Forwarded-For from the socket only when the request has none, so without a reverse proxy
 * that overwrites the header a client can choose this value: per-IP limits are then advisory, and
 * the per-email sign-in limit is what holds (see the README's deployment notes).
 */
export function clientIp(headers: HeaderSource): string | null {
  const forwarded = header(headers, "x-forwarded-for")?.split(",")[0]?.trim();
  const candidate = forwarded || header(headers, "x-real-ip")?.trim() || "";
  // "::ffff:127.0.0.1" → "127.0.0.1", so one client has one key whichever socket family it used.
  const address = candidate.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, "$1");
  return ADDRESS.test(address) ? address : null;
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
