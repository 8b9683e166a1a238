import "server-only";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { OrkestrConnectionError, OrkestrError, OrkestrParseError } from "../orkestr/errors";
import { CryptoError, PasswordWorkBusyError } from "./crypto";
import { DbConflictError, DbNotFoundError, DbRowError, MigrationError } from "./db/errors";
import { DATABASE_RETRY_SECONDS, isDatabaseUnavailable } from "./db/unavailable";
import { VAULT_ERROR_STATUS } from "./tokens";
import { describeUpstreamFault } from "./upstream-faults";
import { UserFacingError } from "./user-error";

// One error shape for Baton's own API: `{ detail, code }`, plus `errors`
// (field → message) on validation failures. Handlers throw; lib/server/route.ts catches everything
// and answers through toErrorResponse(). A 5xx never echoes internals: its detail is generic and
// carries a reference that is also in the server log.

/** Every code Baton's API answers with, and its HTTP status. */
export const ERROR_CODES = {
  bad_request: 400,
  unauthorized: 401,
  invalid_credentials: 401,
  forbidden: 403,
  bad_origin: 403,
  account_disabled: 403,
  // Password sign-in for an address whose team enforces SSO (lib/server/sign-in.ts).
  sso_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  // A Host name Baton does not serve (DNS rebinding): 421 Misdirected Request. lib/host-policy.ts.
  host_not_allowed: 421,
  conflict: 409,
  already_set_up: 409,
  // First-run setup without the code printed at start (lib/server/setup-code.ts).
  bad_setup_code: 403,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_error: 422,
  // `baton.*` metadata keys are Baton's creator stamp (lib/server/creator-stamp.ts).
  reserved_metadata: 422,
  // A spend cap that contradicts another (a member's above the team's): lib/server/usage/caps-store.ts.
  cap_conflict: 422,
  // A spend cap is reached and blocks what would start or prolong spending (issue 22).
  spend_cap_reached: 402,
  rate_limited: 429,
  // An API token's own limit of concurrent sandboxes is reached (lib/server/api-tokens/limits.ts).
  concurrency_limit: 429,
  internal_error: 500,
  bad_gateway: 502,
  // The upstream answered a redirect or 304 (never followed: lib/orkestr/core.ts); see describeError().
  upstream_redirect: 502,
  service_unavailable: 503,
  // Too many password checks at once (lib/server/crypto.ts PasswordWorkBusyError): try again shortly.
  server_busy: 503,
  upstream_timeout: 504,
  // The upstream refused the connection (down or restarting) or reset it: lib/server/upstream-faults.ts.
  upstream_unreachable: 503,
  upstream_reset: 502,
  // The console's own database is restarting or unreachable: lib/server/db/unavailable.ts.
  database_unavailable: 503,
  // The token vault (lib/server/tokens.ts VaultError, lib/server/ssrf.ts UnsafeUrlError): the user's input.
  ...VAULT_ERROR_STATUS,
  connection_name_taken: 409,
  // The upstream refused the stored token of the user's connection (lib/server/upstream.ts): not a
  // 401, which the browser reads as "your Baton session ended".
  connection_token_rejected: 409,
  // "Use the local engine" (lib/server/local-engine.ts LocalEngineError): a server-side setup problem.
  local_engine_secret_missing: 503,
  local_engine_unreachable: 503,
  local_engine_refused: 503,
  local_engine_bad_response: 503,
  // Members and invitations (lib/team-rules.ts, lib/server/members.ts, lib/server/invitations.ts).
  last_owner: 409,
  roles_synced: 409,
  role_above_own: 403,
  owner_only: 403,
  already_member: 409,
  member_disabled: 409,
  account_exists: 409,
  invitation_email_mismatch: 409,
  invitation_used: 410,
  invitation_revoked: 410,
  invitation_expired: 410,
  // Your account and team settings (issue 21): the second factor, password change, team deletion.
  // A wrong code at sign-in is a 401 like a wrong password; inside the console it is 422, because
  // the browser reads a 401 as "your session ended".
  invalid_code: 401,
  sign_in_expired: 401,
  wrong_code: 422,
  wrong_password: 422,
  no_password: 409,
  totp_enabled: 409,
  totp_not_enabled: 409,
  slug_taken: 409,
  confirmation_mismatch: 422,
  // Teams (lib/server/acting-team.ts): a request naming a team the user is not a member of, or that
  // does not exist (one answer for both); a user who already owns the most teams one may create.
  team_not_found: 404,
  team_limit: 409,
  // Personal API tokens (issue 23, lib/server/api-tokens/): a bearer token that is not one, or
  // revoked, or expired (401 with WWW-Authenticate: Bearer); one naming another team than its own.
  invalid_token: 401,
  // A right token of an SSO person whose last SSO sign-in is older than the team's session maximum
  // (lib/server/api-tokens/sso-bound.ts): signing in through SSO again renews it.
  sso_reauth_required: 401,
  token_team_mismatch: 403,
  token_limit: 409,
  // Baton-signed file links (lib/server/file-link-signature.ts, lib/server/api-tokens/signed-link.ts):
  // the contract's codes for a presigned URL, and a link whose API token no longer allows it.
  invalid_signature: 403,
  url_expired: 410,
  link_revoked: 403,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
export const ErrorCodeSchema = z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]);

export interface ErrorBody {
  detail: string;
  code: string;
  /** Validation errors by field path ("team_name", "items.0.name"); "_" for the whole input. */
  errors?: Record<string, string>;
  /** The form field the error belongs to (connection forms: "name", "base_url", "token"). */
  field?: string;
  retry_after_seconds?: number;
}

export class AppError extends Error {
  override name = "AppError";
  readonly status: number;
  readonly retryAfterSeconds: number | null;
  readonly errors: Record<string, string> | undefined;

  constructor(
    readonly code: ErrorCode,
    /** One readable sentence for the user: it is sent as `detail`. */
    readonly detail: string,
    options: { retryAfterSeconds?: number; errors?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = ERROR_CODES[code];
    this.retryAfterSeconds = options.retryAfterSeconds ?? null;
    this.errors = options.errors;
  }
}

// Repository conflict codes that the API names differently.
const CONFLICT_CODE_ALIASES: Record<string, string> = { setup_done: "already_set_up" };
// Repository conflicts that are about one form field.
const CONFLICT_FIELDS: Record<string, string> = { connection_name_taken: "name" };

/** "team_name" → "Team name"; "items.0.name" → "Items.0.name". */
function humanizePath(path: PropertyKey[]): string {
  const text = path.map(String).join(".").replace(/_/g, " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function issueMessage(issue: z.core.$ZodIssue): string {
  // zod's own wording for a missing field ("Invalid input: expected string, received undefined").
  if (issue.code === "invalid_type" && /received undefined$/.test(issue.message)) return "is required";
  return issue.message;
}

/**
 * A ZodError as the API's 422: `detail` is one readable line ("Password: must be at least 12
 * characters. Email: not a valid email address."), `errors` maps each field path to its first message.
 * `where` names the input for issues without a path ("the request body").
 */
export function validationError(error: z.ZodError, where = "the request"): AppError {
  const errors: Record<string, string> = {};
  const sentences: string[] = [];
  for (const issue of error.issues) {
    const key = issue.path.length ? issue.path.map(String).join(".") : "_";
    if (key in errors) continue;
    const message = issueMessage(issue);
    errors[key] = message;
    const sentence = issue.path.length
      ? `${humanizePath(issue.path)}: ${message}`
      : `${where.charAt(0).toUpperCase()}${where.slice(1)}: ${message}`;
    sentences.push(/[.!?]$/.test(sentence) ? sentence : `${sentence}.`);
  }
  return new AppError("validation_error", sentences.join(" ") || `Invalid ${where}.`, { errors });
}

/** A short random reference, logged with the error and sent to the client instead of internals. */
function newReference(): string {
  return randomBytes(6).toString("hex");
}

function logInternal(reference: string, err: unknown, context?: string): void {
  console.error(`[baton] ${context ? `${context}: ` : ""}internal error (ref ${reference}):`, err);
}

function internal(
  err: unknown,
  context?: string,
  status = 500,
  code: ErrorCode = "internal_error",
  what = "Something went wrong on the Baton server",
): { status: number; body: ErrorBody } {
  const reference = newReference();
  logInternal(reference, err, context);
  return {
    status,
    body: {
      detail: `${what}. Try again; if it keeps happening, give the administrator this reference: ${reference}.`,
      code,
    },
  };
}

/** What the log keeps of an upstream failure the browser gets Baton's own words for. */
function logUpstream(err: OrkestrError, context?: string): void {
  const where = [err.method, err.url].filter(Boolean).join(" ");
  const location = err.headers?.get("location");
  console.error(
    `[baton] ${context ? `${context}: ` : ""}the orkestr API answered ${err.status} ${err.code}${where ? ` to ${where}` : ""}` +
      `${location ? ` (Location: ${location})` : ""}${err.requestId ? ` (request id ${err.requestId})` : ""}: ${err.detail}`,
  );
}

const UPSTREAM_FAILURE: Record<number, string> = {
  500: "had an internal error",
  501: "does not implement this",
  502: "could not be reached by a gateway in front of it",
  503: "is unavailable",
  504: "timed out at a gateway in front of it",
};

/**
 * Baton's own sentence for an upstream 5xx (its detail is logged, never sent on): what failed, and
 * how long the upstream asked to wait. Nothing about retrying: the proxy never retries on the
 * browser's behalf, and what happens next is the page's to say ("Retrying in 8 s" for a read, the
 * kept form for a write), so the two sentences never contradict each other on one screen.
 */
export function upstreamFailureDetail(err: { status: number; code: string; retryAfterSeconds: number | null }): string {
  const when =
    err.retryAfterSeconds !== null
      ? ` It asked to wait ${Math.max(1, Math.ceil(err.retryAfterSeconds))} s before the next try.`
      : "";
  if (err.code === "fleet_full") return `orkestr has no free capacity right now (${err.status} fleet_full).${when}`;
  return `The orkestr API ${UPSTREAM_FAILURE[err.status] ?? "had an error"} (${err.status}).${when}`;
}

/**
 * Maps anything thrown into a status and an `{ detail, code }` body:
 * AppError → its own; ZodError → 422; OrkestrError → its upstream status and code (0 → 502/504; a
 * redirect or 304 → 502 upstream_redirect; a 5xx with Baton's own detail, the upstream's logged);
 * UserFacingError (VaultError, UnsafeUrlError: always about "base_url", LocalEngineError) → its
 * status, code, detail and field; DbConflictError → 409; DbNotFoundError → 404; MigrationError → 503; a refused or
 * reset upstream connection → 503 upstream_unreachable / 502 upstream_reset, and a database that went
 * away → 503 database_unavailable, each with Retry-After; everything else (DbRowError,
 * CryptoError, bugs) → 500 with a generic detail and a logged reference.
 */
export function describeError(
  err: unknown,
  context?: string,
): { status: number; body: ErrorBody; retryAfterSeconds: number | null } {
  if (err instanceof AppError) {
    const body: ErrorBody = { detail: err.detail, code: err.code };
    if (err.errors) body.errors = err.errors;
    if (err.retryAfterSeconds !== null) body.retry_after_seconds = err.retryAfterSeconds;
    return { status: err.status, body, retryAfterSeconds: err.retryAfterSeconds };
  }
  if (err instanceof z.ZodError) return describeError(validationError(err), context);
  if (err instanceof PasswordWorkBusyError) {
    const detail = "Baton is checking too many passwords at once. Try again in a moment.";
    return {
      status: 503,
      body: { detail, code: "server_busy", retry_after_seconds: err.retryAfterSeconds },
      retryAfterSeconds: err.retryAfterSeconds,
    };
  }
  if (err instanceof OrkestrError) {
    // No response at all: the upstream could not be reached (502) or did not answer in time (504).
    // Baton wrote those details itself, as it did a parse failure's (502 bad_response).
    if (err instanceof OrkestrConnectionError) {
      const fault = describeUpstreamFault(err);
      if (fault) {
        console.error(
          `[baton] ${context ? `${context}: ` : ""}${fault.code} ${err.method ?? ""} ${err.url ?? ""}: ${err.message}`,
        );
        return {
          status: fault.status,
          body: { detail: fault.detail, code: fault.code, retry_after_seconds: fault.retryAfterSeconds },
          retryAfterSeconds: fault.retryAfterSeconds,
        };
      }
    }
    if (err.status === 0 || err instanceof OrkestrConnectionError || err instanceof OrkestrParseError) {
      const status = err.status === 0 ? (err.code === "timeout" ? 504 : 502) : err.status;
      const body: ErrorBody = { detail: err.detail, code: err.code };
      if (err.retryAfterSeconds !== null) body.retry_after_seconds = err.retryAfterSeconds;
      return { status, body, retryAfterSeconds: err.retryAfterSeconds };
    }
    // A redirect or 304 (not followed), or any other status that is not an error: not an answer
    // Baton can pass on (a 3xx without Location, or a 304 with a body, is no valid response).
    if (err.status < 400 || err.status > 599) {
      logUpstream(err, context);
      return {
        status: 502,
        body: {
          detail: `The orkestr API answered ${err.status}${err.status >= 300 && err.status < 400 ? " (a redirect, which Baton does not follow)" : ""} instead of a result. Check the connection's base URL in Settings → Connections.`,
          code: "upstream_redirect",
        },
        retryAfterSeconds: null,
      };
    }
    const body: ErrorBody = { detail: err.status >= 500 ? upstreamFailureDetail(err) : err.detail, code: err.code };
    // The upstream's own words on its failure may name its internals: they go to the log only.
    if (err.status >= 500) logUpstream(err, context);
    // A refusal's context (the holder in `attached_sandbox_id`, a cap in `limit`) is the user's to see.
    else Object.assign(body, upstreamContext(err.body));
    if (err.retryAfterSeconds !== null) body.retry_after_seconds = err.retryAfterSeconds;
    return { status: err.status, body, retryAfterSeconds: err.retryAfterSeconds };
  }
  if (err instanceof UserFacingError) {
    // Its detail is written for the user (never a token, never internals); keep status and code.
    const body: ErrorBody = { detail: err.detail, code: err.code };
    const field = err.field;
    if (field) {
      body.field = field;
      body.errors = { [field]: err.detail };
    }
    return { status: err.status, body, retryAfterSeconds: null };
  }
  if (err instanceof DbConflictError) {
    const detail = err.message.charAt(0).toUpperCase() + err.message.slice(1);
    const body: ErrorBody = {
      detail: /[.!?]$/.test(detail) ? detail : `${detail}.`,
      code: CONFLICT_CODE_ALIASES[err.code] ?? err.code,
    };
    const field = CONFLICT_FIELDS[err.code];
    if (field) {
      body.field = field;
      body.errors = { [field]: body.detail };
    }
    return { status: 409, body, retryAfterSeconds: null };
  }
  if (err instanceof DbNotFoundError) {
    const detail = err.message.charAt(0).toUpperCase() + err.message.slice(1);
    return {
      status: 404,
      body: { detail: /[.!?]$/.test(detail) ? detail : `${detail}.`, code: "not_found" },
      retryAfterSeconds: null,
    };
  }
  // Before MigrationError: a migration that failed because the server was down is that, not a bad migration.
  if (isDatabaseUnavailable(err)) {
    console.error(`[baton] ${context ? `${context}: ` : ""}database unavailable:`, (err as Error).message);
    return {
      status: 503,
      body: {
        detail: `The Baton database is unavailable (restarting or unreachable). Try again in ${DATABASE_RETRY_SECONDS} s or so.`,
        code: "database_unavailable",
        retry_after_seconds: DATABASE_RETRY_SECONDS,
      },
      retryAfterSeconds: DATABASE_RETRY_SECONDS,
    };
  }
  if (err instanceof MigrationError) {
    return {
      ...internal(err, context, 503, "service_unavailable", "The Baton database is not available"),
      retryAfterSeconds: null,
    };
  }
  if (err instanceof DbRowError || err instanceof CryptoError)
    return { ...internal(err, context), retryAfterSeconds: null };
  return { ...internal(err, context), retryAfterSeconds: null };
}

/** JSON error response; `Retry-After` (whole seconds) when the error has one. */
/** Keys of an error body that are Baton's own (or its forms' field errors), never taken from upstream. */
const OWN_ERROR_KEYS = new Set(["detail", "code", "errors", "field", "retry_after_seconds"]);
const MAX_CONTEXT_FIELDS = 16;
const MAX_CONTEXT_STRING = 500;

/**
 * The scalar context fields of an upstream 4xx error body (`{"detail", "code", "attached_sandbox_id":
 * "sbx_…", "limit": 10}`), passed on beside Baton's detail and code: plain names, strings cut to 500
 * characters, at most 16. Nested values stay behind: nothing the browser needs comes that way.
 */
function upstreamContext(raw: unknown): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return out;
  let n = 0;
  for (const [key, value] of Object.entries(raw)) {
    if (n >= MAX_CONTEXT_FIELDS) break;
    if (OWN_ERROR_KEYS.has(key) || !/^[a-z][a-z0-9_]{0,63}$/.test(key)) continue;
    if (typeof value === "string") out[key] = value.slice(0, MAX_CONTEXT_STRING);
    else if (value === null || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value)))
      out[key] = value;
    else continue;
    n++;
  }
  return out;
}

export function errorResponse(err: unknown, context?: string): Response {
  let { status, body, retryAfterSeconds } = describeError(err, context);
  if (status < 400 || status > 599) {
    // Never answer an error with a status a Response cannot carry a body with (304) or that is no error.
    ({ status, body, retryAfterSeconds } = { ...internal(err, context), retryAfterSeconds: null });
  }
  const headers = new Headers({ "content-type": "application/json", "cache-control": "no-store" });
  if (retryAfterSeconds !== null) headers.set("retry-after", String(Math.max(0, Math.ceil(retryAfterSeconds))));
  return new Response(JSON.stringify(body), { status, headers });
}
