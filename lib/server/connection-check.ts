import "server-only";
import { createOrkestrClient, type FetchLike } from "../orkestr/core";
import { describeStatus, OrkestrError, OrkestrParseError, OrkestrTimeoutError } from "../orkestr/errors";
import type { Limits } from "../orkestr/schemas/limits";
import {
  assertSafeBaseUrl,
  fetchFor,
  UnsafeUrlError,
  type SafeBaseUrl,
  type SafeUrlOptions,
  type UnsafeUrlCode,
} from "./ssrf";

// "Does this base URL + token work?", asked when a connection is saved and by the status
// indicator: one GET of the limits endpoint (alias /v1/limits), a short timeout, no retries, and
// an answer the Settings page can show as is. Never throws for anything the server does.

export type ConnectionCheckCode =
  "bad_token" | "insufficient_scope" | "not_orkestr" | "unreachable" | "upstream_error" | UnsafeUrlCode;

export interface ConnectionCheckOk {
  ok: true;
  /** The normalised base URL that was checked. */
  baseUrl: string;
  plan: string | null;
  regions: string[];
  /** Present when the server names itself (the local engine says `{kind: "local"}`). */
  engine?: { kind: string; name?: string };
  latencyMs: number;
  /** Set when the server is reachable but could not confirm the token (503 fleet_full). */
  warning?: string;
}

export interface ConnectionCheckFailed {
  ok: false;
  code: ConnectionCheckCode;
  /** One or two sentences for the user: what happened and what to do. */
  detail: string;
  /** The upstream HTTP status when one arrived. */
  status?: number;
}

export type ConnectionCheck = ConnectionCheckOk | ConnectionCheckFailed;

export interface CheckConnectionOptions extends SafeUrlOptions {
  /** Whole check, default 5 000 ms. */
  timeoutMs?: number;
  /** Replaces the fetch (default: guardedFetch, or the global fetch for the local engine). */
  fetch?: FetchLike;
  signal?: AbortSignal;
}

/** Fields of which at least one is in every orkestr limits answer (the seed lists plan and sizes). */
const LIMITS_MARKERS = [
  "plan",
  "allowed_sizes",
  "sizes",
  "max_concurrent",
  "ram_budget_mb",
  "regions",
  "max_timeout_seconds",
] as const;

const LIMITS_PATH = "/v1/sandboxes/limits";

function clip(text: string, max = 200): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** The first system error code in a cause chain (undici wraps it: TypeError → Error{code}). */
function systemCause(err: unknown): { code?: string; message: string } | null {
  let c: unknown = err;
  for (let depth = 0; depth < 6 && c && typeof c === "object"; depth++) {
    const e = c as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof e.code === "string") return { code: e.code, message: typeof e.message === "string" ? e.message : "" };
    // Happy-eyeballs failures are an AggregateError of one error per address.
    if (Array.isArray(e.errors) && e.errors[0]) c = e.errors[0];
    else c = e.cause;
  }
  return null;
}

const TLS_CODES =
  /^(CERT_|ERR_TLS_|ERR_SSL_|EPROTO$|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_|HOSTNAME_MISMATCH$)/;

function unreachable(base: string, err: OrkestrError, timeoutMs: number, timedOut: boolean): ConnectionCheckFailed {
  const at = `the server at ${base}`;
  if (timedOut || err instanceof OrkestrTimeoutError || err.code === "timeout") {
    return {
      ok: false,
      code: "unreachable",
      detail: `Could not reach ${at}: it did not answer within ${timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 100) / 10} s`}. Check the URL and that the server is up; a firewall may be dropping the connection.`,
    };
  }
  const cause = systemCause(err.cause);
  const code = cause?.code ?? "";
  const said = cause
    ? `${code}${cause.message && !cause.message.startsWith(code) ? `: ${cause.message}` : ""}`
    : err.detail;
  if (code === "EPRIVATE_ADDRESS") {
    return {
      ok: false,
      code: "private_address",
      detail: `Refused to connect to ${base}: ${cause?.message ?? "it resolves to an internal address"}. Baton only connects to public addresses (and the local engine).`,
    };
  }
  let why: string;
  if (code === "ECONNREFUSED")
    why =
      "the connection was refused: nothing is listening on that host and port. Check the port and that the server is running";
  else if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME")
    why = "the host name does not resolve. Check the spelling";
  else if (code === "ECONNRESET" || code === "EPIPE" || code.startsWith("UND_ERR_SOCKET"))
    why = "the connection was reset. A proxy or firewall may be blocking it; try again";
  else if (code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "EADDRNOTAVAIL")
    why = "there is no network route to the host. Check the URL and this machine's network";
  else if (code === "ETIMEDOUT" || code === "UND_ERR_CONNECT_TIMEOUT")
    why = "connecting timed out. Check the URL; a firewall may be dropping the connection";
  else if (TLS_CODES.test(code))
    why =
      "the TLS handshake failed: the server's certificate is not trusted or does not match the host name. Use the API's public https:// URL";
  else why = "the connection failed. Check the URL and that the server is running";
  return { ok: false, code: "unreachable", detail: `Could not reach ${at} (${clip(said, 160)}): ${why}.` };
}

function notOrkestr(base: string, answered: string, status?: number): ConnectionCheckFailed {
  return {
    ok: false,
    code: "not_orkestr",
    detail: `${base} does not look like an orkestr v1 API (GET ${base}${LIMITS_PATH} ${answered}). Check the base URL: it is the API's address, such as https://api.orkestr.eu, with or without /v1.`,
    ...(status !== undefined ? { status } : {}),
  };
}

function fromError(base: string, err: OrkestrError, timeoutMs: number, timedOut: boolean): ConnectionCheck | null {
  if (err.status === 0) return unreachable(base, err, timeoutMs, timedOut);
  if (err instanceof OrkestrParseError) {
    const problem = /could not read: (.*?)\.?$/.exec(err.detail)?.[1] ?? "a body Baton could not read";
    const what = /^the \d+ response /.test(problem)
      ? problem.replace(/^the \d+ response /, "a response that ")
      : `JSON that does not match the limits schema (${clip(problem, 160)})`;
    return notOrkestr(base, `answered ${err.upstreamStatus} with ${what}`, err.upstreamStatus);
  }
  const isJson = err.body !== null && typeof err.body === "object";
  const { status } = err;
  if (err.code === "redirect_not_followed" || (status >= 300 && status < 400)) {
    const to = err.headers?.get("location");
    return notOrkestr(
      base,
      `answered a redirect (${status})${to ? ` to ${clip(to, 200)}; if that is the API, use it as the base URL` : ""}`,
      status,
    );
  }
  if (status === 401) {
    return {
      ok: false,
      code: "bad_token",
      status,
      detail: "The token was refused (401). Check it was copied whole and not revoked.",
    };
  }
  if (status === 403 && err.code === "insufficient_scope") {
    const body = (isJson ? err.body : {}) as { required_scope?: unknown };
    const scope =
      typeof body.required_scope === "string"
        ? body.required_scope
        : (/\b(sandboxes:[a-z]+)\b/.exec(err.detail)?.[1] ?? "sandboxes:read");
    return {
      ok: false,
      code: "insufficient_scope",
      status,
      detail: `The token lacks the ${scope} scope (403 insufficient_scope). Create a token with the sandboxes:read and sandboxes:write scopes.`,
    };
  }
  if (status === 403 && isJson) {
    return {
      ok: false,
      code: "bad_token",
      status,
      detail: `The token was refused (403${err.detail ? `: ${clip(err.detail)}` : ""}). Check it was copied whole and not revoked.`,
    };
  }
  if (status === 503 && err.code === "fleet_full") return null; // reachable; the caller reports ok
  if (status >= 500) {
    // The upstream's own words on its failure (a stack trace, an internal host name) go to the log,
    // not to the browser: the user gets the status and what to do.
    console.error(`[baton] connection check: the orkestr API at ${base} answered ${status} ${err.code}: ${err.detail}`);
    return {
      ok: false,
      code: "upstream_error",
      status,
      detail: `The orkestr API at ${base} answered ${describeStatus(status)}${isJson ? ` (${err.code})` : ""}. It is having trouble; try again in a moment.`,
    };
  }
  if (
    status === 429 ||
    (isJson && ![404, 405, 410].includes(status) && typeof (err.body as { code?: unknown }).code === "string")
  ) {
    const wait =
      err.retryAfterSeconds !== null
        ? ` Try again in ${Math.ceil(err.retryAfterSeconds)} s.`
        : " Try again in a moment.";
    return {
      ok: false,
      code: "upstream_error",
      status,
      detail: `The orkestr API at ${base} answered ${describeStatus(status)} (${err.code}${err.detail ? `: ${clip(err.detail)}` : ""}).${status === 429 ? wait : ""}`,
    };
  }
  return notOrkestr(base, `answered ${describeStatus(status)}${isJson ? "" : " without JSON"}`, status);
}

/**
 * Checks a base URL and token against the orkestr limits endpoint. The URL goes through
 * assertSafeBaseUrl() first unless it is already a SafeBaseUrl. Returns `{ ok: true, plan,
 * regions, engine?, latencyMs }`, or `{ ok: false, code, detail }` with code bad_token,
 * insufficient_scope, not_orkestr, unreachable, upstream_error, or the URL's invalid_url,
 * private_address, unresolvable_host. A 503 fleet_full counts as reachable (ok, with a warning).
 */
export async function checkConnection(
  baseUrl: string | SafeBaseUrl,
  token: string,
  opts: CheckConnectionOptions = {},
): Promise<ConnectionCheck> {
  let safe: SafeBaseUrl;
  if (typeof baseUrl === "string") {
    try {
      safe = await assertSafeBaseUrl(baseUrl, opts);
    } catch (err) {
      if (err instanceof UnsafeUrlError) return { ok: false, code: err.code, detail: err.detail };
      throw err;
    }
  } else {
    safe = baseUrl;
  }
  const base = safe.baseUrl;
  if (!/^[\x21-\x7e]+$/.test(token)) {
    return {
      ok: false,
      code: "bad_token",
      detail: "The token contains spaces, line breaks or other characters a token never has. Paste it again, whole.",
    };
  }

  const timeoutMs = opts.timeoutMs ?? 5_000;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  const client = createOrkestrClient({
    baseUrl: base,
    token,
    fetch: opts.fetch ?? fetchFor(safe, opts.resolver ? { resolver: opts.resolver } : undefined),
    timeoutMs,
    maxRetries: 0,
  });
  const started = performance.now();
  let limits: Limits;
  try {
    limits = await client.sandboxes.limits({ signal, timeoutMs, maxRetries: 0 });
  } catch (err) {
    if (!(err instanceof OrkestrError)) throw err;
    if (opts.signal?.aborted) throw err;
    const failed = fromError(base, err, timeoutMs, deadline.aborted);
    if (failed) return failed;
    return {
      ok: true,
      baseUrl: base,
      plan: null,
      regions: [],
      latencyMs: Math.round(performance.now() - started),
      warning: `The orkestr API at ${base} is reachable but has no free capacity right now (503 fleet_full), so the token could not be confirmed yet.`,
    };
  }
  const latencyMs = Math.round(performance.now() - started);
  const body = limits as Record<string, unknown>;
  if (!LIMITS_MARKERS.some((k) => body[k] !== undefined && body[k] !== null)) {
    return notOrkestr(
      base,
      `answered 200 with JSON that has none of the limits fields (${LIMITS_MARKERS.slice(0, 3).join(", ")}…)`,
      200,
    );
  }
  const engineKind = limits.engine?.kind;
  return {
    ok: true,
    baseUrl: base,
    plan: limits.plan ?? null,
    regions: limits.regions ?? [],
    ...(engineKind
      ? { engine: { kind: engineKind, ...(limits.engine?.name ? { name: limits.engine.name } : {}) } }
      : {}),
    latencyMs,
  };
}
