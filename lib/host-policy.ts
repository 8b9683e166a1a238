/**
 * Which Host names this Baton serves, and which Origins count as Baton's own (DNS-rebinding and
 * CSRF defence). Pure and import-free, so the custom server (scripts/console-server.mjs, through
 * lib/server/front-door.ts), proxy.ts, route() and the terminal relay all share it.
 *
 * - `BATON_URL` (e.g. `https://baton.example.com`): the one public origin. When set, it replaces
 *   the loopback defaults.
 * - unset: the loopback names `localhost`, `127.0.0.1` and `[::1]` on the console's `PORT`
 *   (default 3000), so a page on `evil.example` that resolves to 127.0.0.1 is refused (its
 *   requests carry `Host: evil.example:3000`).
 * - `BATON_ALLOWED_HOSTS`: more names, comma-separated: `host`, `host:port`, `[v6]:port` or a
 *   whole origin `https://host[:port]`.
 *
 * An entry without a port matches any port of that name (a rebinding attacker controls the name,
 * not the port); with a port, the request's port must be that one (a Host without a port is port
 * 80 or 443).
 */

export interface HostEntry {
  /** Lowercase; IPv6 in brackets, as in a Host header. */
  hostname: string;
  /** Decimal string, or null for "any port". */
  port: string | null;
  /** Only for Origin checks: the scheme the origin must have, or null for http or https. */
  scheme: "http:" | "https:" | null;
}

export interface HostPolicy {
  entries: readonly HostEntry[];
  /** The names served, for log lines and error messages (`localhost:3000, 127.0.0.1:3000, …`). */
  readonly summary: string;
}

export type HostEnv = Record<string, string | undefined>;

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"] as const;
const DEFAULT_PORT = "3000";

/** A Host header value (or a host[:port] entry): a DNS name or IPv4, or a bracketed IPv6, and an optional port. */
const HOST_SYNTAX =
  /^(?:([a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*)|(\[[0-9a-f:.]+\]))(?::(\d{1,5}))?$/i;

/** Splits `host[:port]` into a lowercase hostname and a port (without leading zeros), or null when it is not one. */
export function splitHost(value: string): { hostname: string; port: string | null } | null {
  const m = HOST_SYNTAX.exec(value.trim());
  if (!m) return null;
  const hostname = (m[1] ?? m[2] ?? "").toLowerCase();
  const rawPort = m[3];
  if (rawPort === undefined) return { hostname, port: null };
  const n = Number(rawPort);
  if (n < 1 || n > 65535) return null;
  return { hostname, port: String(n) };
}

function originEntry(raw: string, what: string, issues: string[]): HostEntry | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    issues.push(
      `${what} must be an absolute http(s) URL such as https://baton.example.com (got ${JSON.stringify(raw)})`,
    );
    return null;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    issues.push(`${what} must use http or https (got "${u.protocol}")`);
    return null;
  }
  if (u.username || u.password || u.search || u.hash || (u.pathname !== "/" && u.pathname !== "")) {
    issues.push(
      `${what} must be an origin only (scheme, host and port, no path, query or credentials; got ${JSON.stringify(raw)})`,
    );
    return null;
  }
  return { hostname: u.hostname.toLowerCase(), port: u.port || null, scheme: u.protocol };
}

/** Parses the policy out of an environment; `issues` lists what is wrong with it (empty when valid). */
export function parseHostPolicy(env: HostEnv): { policy: HostPolicy; issues: string[] } {
  const issues: string[] = [];
  const entries: HostEntry[] = [];
  const batonUrl = env.BATON_URL?.trim();
  if (batonUrl) {
    const entry = originEntry(batonUrl, "BATON_URL", issues);
    if (entry) entries.push(entry);
  } else {
    const rawPort = env.PORT?.trim() || DEFAULT_PORT;
    const port = /^\d{1,5}$/.test(rawPort) ? String(Number(rawPort)) : DEFAULT_PORT;
    for (const hostname of LOOPBACK_NAMES) entries.push({ hostname, port, scheme: null });
  }
  for (const item of (env.BATON_ALLOWED_HOSTS ?? "").split(",")) {
    const raw = item.trim();
    if (!raw) continue;
    if (raw.includes("://")) {
      const entry = originEntry(raw, `BATON_ALLOWED_HOSTS entry ${JSON.stringify(raw)}`, issues);
      if (entry) entries.push(entry);
      continue;
    }
    const split = splitHost(raw);
    if (!split) {
      issues.push(`BATON_ALLOWED_HOSTS: ${JSON.stringify(raw)} is not a host name, host:port or http(s) origin`);
      continue;
    }
    entries.push({ ...split, scheme: null });
  }
  const summary = entries.map((e) => (e.port ? `${e.hostname}:${e.port}` : e.hostname)).join(", ");
  return { policy: { entries, summary }, issues };
}

let cache: { key: string; policy: HostPolicy } | undefined;

/**
 * The policy of the current process environment (re-read when BATON_URL, BATON_ALLOWED_HOSTS or
 * PORT change, which only tests do). Invalid entries are left out here; the server refuses to start
 * with them (lib/server/env.ts and the front door report the issues).
 */
export function currentHostPolicy(env: HostEnv = process.env): HostPolicy {
  const key = `${env.BATON_URL ?? ""}\n${env.BATON_ALLOWED_HOSTS ?? ""}\n${env.PORT ?? ""}`;
  if (cache?.key !== key) cache = { key, policy: parseHostPolicy(env).policy };
  return cache.policy;
}

const portMatches = (entryPort: string | null, port: string | null, defaults: readonly string[]): boolean =>
  entryPort === null || entryPort === port || (port === null && defaults.includes(entryPort));

/** Whether a Host header value names this Baton. A missing or malformed Host is not allowed. */
export function hostAllowed(host: string | null | undefined, policy: HostPolicy = currentHostPolicy()): boolean {
  if (!host) return false;
  const split = splitHost(host);
  if (!split) return false;
  return policy.entries.some((e) => e.hostname === split.hostname && portMatches(e.port, split.port, ["80", "443"]));
}

/** Whether an Origin header value is one of this Baton's own origins (http(s) only; "null" never). */
export function originAllowed(origin: string | null | undefined, policy: HostPolicy = currentHostPolicy()): boolean {
  if (!origin) return false;
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    return false; // "null" (sandboxed frames, privacy redirects) and garbage
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return false;
  const hostname = u.hostname.toLowerCase();
  const port = u.port || (u.protocol === "https:" ? "443" : "80");
  return policy.entries.some(
    (e) =>
      e.hostname === hostname && (e.scheme === null || e.scheme === u.protocol) && (e.port === null || e.port === port),
  );
}

/** The error body for a request to a name Baton does not serve (HTTP 421 Misdirected Request). */
export const HOST_NOT_ALLOWED = {
  code: "host_not_allowed",
  detail:
    "This Baton server does not answer to this host name. Open Baton at its own address (BATON_URL), or add the name to BATON_ALLOWED_HOSTS.",
} as const;
