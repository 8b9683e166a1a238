/**
 * The console's security headers, built per request by proxy.ts. Pure functions without imports, so
 * the policy is unit-tested apart from Next.
 */

/**
 * Request header proxy.ts sets to the requested path + query (overwriting whatever a client sent),
 * so server components that redirect to /login can come back afterwards (`?next=`). Information
 * only: it authenticates nothing.
 */
export const REQUEST_PATH_HEADER = "x-baton-path";

/**
 * The policy of every `/api/v1` answer the console server gives itself (lib/server/api-fast-path.ts):
 * JSON, event streams and file bytes, never a document that runs a script or loads anything, so
 * the strictest policy fits and needs no per-response nonce. A handler's own policy (a file
 * download's `sandbox`) still wins.
 */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** Where sandbox previews are served; the console embeds them in iframes. */
export const PREVIEW_FRAME_SOURCES = ["http://*.sbx.localhost:*", "https://*.sbx.orkestr.run"] as const;

export function contentSecurityPolicy(nonce: string, { dev = false }: { dev?: boolean } = {}): string {
  if (!/^[A-Za-z0-9+/_-]+=*$/.test(nonce)) throw new Error("a CSP nonce must be base64");
  return [
    "default-src 'self'",
    // 'strict-dynamic': scripts loaded by a nonced script are trusted; host allow-lists are ignored.
    // React needs eval only in development (error stacks), never in production.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    `frame-src ${PREVIEW_FRAME_SOURCES.join(" ")}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "object-src 'none'",
  ].join("; ");
}

export const PERMISSIONS_POLICY = [
  "accelerometer=()",
  "camera=()",
  "geolocation=()",
  "gyroscope=()",
  "magnetometer=()",
  "microphone=()",
  "payment=()",
  "usb=()",
  "browsing-topics=()",
].join(", ");

export const HSTS = "max-age=63072000; includeSubDomains";

/** 128 random bits, base64: unguessable and fresh for every response. */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}

/** The headers every response carries; HSTS only when the client reached us over HTTPS. */
export function securityHeaders(csp: string, { https }: { https: boolean }): Record<string, string> {
  return {
    "Content-Security-Policy": csp,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "X-Frame-Options": "DENY",
    "Permissions-Policy": PERMISSIONS_POLICY,
    ...(https ? { "Strict-Transport-Security": HSTS } : {}),
  };
}

/**
 * HTTPS as the client saw it: the first x-forwarded-proto hop when a TLS-terminating proxy sets it,
 * else the request's own protocol.
 */
export function isHttps(forwardedProto: string | null, protocol: string): boolean {
  const first = forwardedProto?.split(",")[0]?.trim().toLowerCase();
  return first ? first === "https" : protocol === "https:";
}
