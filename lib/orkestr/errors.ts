// Types only: this module runs in the browser core too (lib/api), where zod must not load.
import type { ApiErrorBody, ValidationIssue } from "./schemas/errors";

/**
 * One error type for everything the orkestr client can run into:
 * `status` (HTTP status, 0 when no response arrived), `code` (snake_case; dispatch on it, since the
 * contract's statuses are partly guessed), `detail` (one readable sentence), `raw` (the upstream
 * `detail` as sent, string or FastAPI array), `retryAfterSeconds`, `requestId`. `message` is
 * `detail` plus what to do next.
 */
export interface OrkestrErrorInit {
  status: number;
  code: string;
  detail: string;
  raw?: unknown;
  body?: unknown;
  retryAfterSeconds?: number | null;
  requestId?: string;
  headers?: Headers | null;
  method?: string;
  url?: string;
  hint?: string;
  cause?: unknown;
}

export class OrkestrError extends Error {
  override name = "OrkestrError";
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly raw: unknown;
  /** The whole parsed error body (context fields such as `limit`, `max_named_snapshots`). */
  readonly body: unknown;
  readonly retryAfterSeconds: number | null;
  readonly requestId?: string;
  readonly headers: Headers | null;
  readonly method?: string;
  readonly url?: string;

  constructor(init: OrkestrErrorInit) {
    super(
      init.hint ? `${/[.!?:]$/.test(init.detail) ? init.detail : `${init.detail}.`} ${init.hint}` : init.detail,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.raw = init.raw === undefined ? init.detail : init.raw;
    this.body = init.body ?? null;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
    if (init.requestId !== undefined) this.requestId = init.requestId;
    this.headers = init.headers ?? null;
    if (init.method !== undefined) this.method = init.method;
    if (init.url !== undefined) this.url = init.url;
  }

  /**
   * Validation messages by field (`{"timeout_seconds": "…"}`): an upstream FastAPI array in `raw`
   * (its leading body/query/path location dropped), or the `errors` object of Baton's own API.
   */
  get fieldErrors(): Record<string, string> {
    const out: Record<string, string> = {};
    if (Array.isArray(this.raw)) {
      for (const issue of this.raw as ValidationIssue[]) {
        const loc = (issue?.loc ?? []).map(String);
        const field =
          (["body", "query", "path", "header"].includes(loc[0] ?? "") ? loc.slice(1) : loc).join(".") || "_";
        if (!(field in out)) out[field] = issue?.msg ?? "is invalid";
      }
    }
    const errors = (this.body as { errors?: unknown } | null)?.errors;
    if (errors && typeof errors === "object")
      for (const [field, message] of Object.entries(errors)) if (typeof message === "string") out[field] = message;
    return out;
  }

  /** The message for one form field, if the error is about it (Baton's API names it in `field`). */
  forField(field: string): string | null {
    if ((this.body as { field?: unknown } | null)?.field === field) return this.detail;
    return this.fieldErrors[field] ?? null;
  }

  /** The `{detail, code}` shape Baton's own API answers with (never the headers or URL). */
  toJSON(): { detail: string; code: string; status: number; retry_after_seconds?: number } {
    return {
      detail: this.detail,
      code: this.code,
      status: this.status,
      ...(this.retryAfterSeconds !== null ? { retry_after_seconds: this.retryAfterSeconds } : {}),
    };
  }
}

/** A failed HTTP answer with its body read as text, and the request it answered (for the message). */
export interface FailedAnswer {
  status: number;
  statusText?: string;
  headers: Headers;
  text: string;
  method?: string;
  url?: string;
}

/**
 * The error for a non-2xx orkestr response whose body has been read as text. Never throws: an
 * HTML page from a proxy, an empty body or a foreign error shape still give a readable error. A
 * function, not a static method, so the browser (which reads only Baton's own `{detail, code}`,
 * lib/api/core.ts) does not load it and its orkestr-specific wording.
 */
export function errorFromResponse(input: FailedAnswer & { baseUrl?: string; now?: number }): OrkestrError {
  const { status, headers, text } = input;
  const where = input.baseUrl ?? "the orkestr API";
  let parsed: unknown;
  let isJson = false;
  try {
    parsed = text.trim() ? JSON.parse(text) : undefined;
    isJson = parsed !== undefined;
  } catch {
    parsed = undefined;
  }
  // Read field by field (each one type-checked below), so a foreign error shape still yields
  // whatever readable parts it has; no schema library: this module also runs in the browser.
  const b = isJson && parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as ApiErrorBody) : null;
  const nested = b && typeof b.error === "object" && b.error !== null ? (b.error as Record<string, unknown>) : null;

  const code =
    (typeof b?.code === "string" && b.code) ||
    (typeof b?.error_code === "string" && b.error_code) ||
    (nested && typeof nested.code === "string" && nested.code) ||
    (typeof nested?.type === "string" && nested.type) ||
    codeForStatus(status);

  const raw = b?.detail ?? b?.message ?? (typeof b?.error === "string" ? b.error : nested?.message) ?? null;
  let detail = readableDetail(raw);
  if (!detail) {
    detail = isJson
      ? `The orkestr API at ${where} answered ${describeStatus(status, input.statusText)} without an explanation.`
      : nonJsonDetail(status, input.statusText, headers, text, where);
  }
  const retryAfterSeconds =
    parseRetryAfter(headers, input.now) ?? (typeof b?.retry_after_seconds === "number" ? b.retry_after_seconds : null);
  return new OrkestrError({
    status,
    code,
    detail,
    raw: raw ?? (isJson ? parsed : text.slice(0, 2000)),
    body: isJson ? parsed : null,
    retryAfterSeconds,
    requestId: headers.get("x-request-id") ?? headers.get("request-id") ?? undefined,
    headers,
    method: input.method,
    url: input.url,
    hint: hintFor(code, status, retryAfterSeconds),
  });
}

/** No response arrived: DNS failure, refused or reset connection, TLS error. `status` is 0. */
export class OrkestrConnectionError extends OrkestrError {
  override name = "OrkestrConnectionError";
  constructor(init: {
    baseUrl: string;
    cause?: unknown;
    detail?: string;
    code?: string;
    method?: string;
    url?: string;
  }) {
    const reason = describeCause(init.cause);
    super({
      status: 0,
      code: init.code ?? "connection_error",
      detail: init.detail ?? `Could not reach the orkestr API at ${init.baseUrl}${reason ? ` (${reason})` : ""}.`,
      hint: init.detail ? undefined : "Check the URL and that the server is running, then try again.",
      cause: init.cause,
      method: init.method,
      url: init.url,
    });
  }
}

/** No answer within the client's timeout. `status` 0, code `timeout`. */
export class OrkestrTimeoutError extends OrkestrConnectionError {
  override name = "OrkestrTimeoutError";
  readonly timeoutMs: number;
  constructor(init: { baseUrl: string; timeoutMs: number; method?: string; url?: string }) {
    super({
      baseUrl: init.baseUrl,
      code: "timeout",
      detail: `The orkestr API at ${init.baseUrl} did not answer within ${formatSeconds(init.timeoutMs)}. Check the URL or try again.`,
      method: init.method,
      url: init.url,
    });
    this.timeoutMs = init.timeoutMs;
  }
}

/** The caller cancelled the request (its AbortSignal fired). Never retried. */
export class OrkestrAbortError extends OrkestrError {
  override name = "OrkestrAbortError";
  constructor(init: { method?: string; url?: string; cause?: unknown } = {}) {
    super({ status: 0, code: "aborted", detail: "The request to the orkestr API was cancelled.", ...init });
  }
}

/**
 * A response Baton cannot read: a success body that is not JSON or does not match the contract,
 * or a broken stream frame. `status` is 502 (what a proxy should answer); the upstream status is
 * in `upstreamStatus`.
 */
export class OrkestrParseError extends OrkestrError {
  override name = "OrkestrParseError";
  readonly upstreamStatus: number;
  constructor(init: {
    baseUrl: string;
    upstreamStatus: number;
    problem: string;
    excerpt?: string;
    method?: string;
    url?: string;
    cause?: unknown;
    /** Who sent it, as in OrkestrError.fromResponse; default "The orkestr API at <baseUrl>". */
    server?: string;
  }) {
    super({
      status: 502,
      code: "bad_response",
      detail: `${init.server ?? `The orkestr API at ${init.baseUrl}`} sent a response Baton could not read: ${init.problem}.`,
      hint:
        init.server === undefined
          ? "The server may not speak the orkestr v1 API, or a proxy in between changed the response; check the URL."
          : undefined,
      raw: init.excerpt ?? null,
      method: init.method,
      url: init.url,
      cause: init.cause,
    });
    this.upstreamStatus = init.upstreamStatus;
  }
}

/** Readable text for a `detail` that may be a string, a FastAPI array or an object. */
export function readableDetail(raw: unknown): string {
  if (raw === null || raw === undefined) return "";
  if (typeof raw === "string") return raw.trim();
  if (Array.isArray(raw)) {
    const parts = raw.map((issue: unknown) => {
      if (typeof issue === "string") return issue;
      if (issue && typeof issue === "object") {
        const i = issue as { loc?: unknown; msg?: unknown };
        const loc = Array.isArray(i.loc) ? i.loc.map(String) : [];
        const field = (["body", "query", "path", "header"].includes(loc[0] ?? "") ? loc.slice(1) : loc).join(".");
        const msg = typeof i.msg === "string" ? i.msg : "is invalid";
        return field ? `${field}: ${msg}` : msg;
      }
      return String(issue);
    });
    return parts.length ? `Invalid request: ${parts.join("; ")}.` : "";
  }
  if (typeof raw === "object") {
    const o = raw as Record<string, unknown>;
    if (typeof o.message === "string") return o.message;
    if (typeof o.msg === "string") return o.msg;
    try {
      return JSON.stringify(raw).slice(0, 500);
    } catch {
      return "";
    }
  }
  return String(raw);
}

/**
 * `Retry-After` (delta seconds or an HTTP date), or `retry-after-ms`, as seconds; null when
 * absent or unreadable.
 */
export function parseRetryAfter(headers: Headers | null | undefined, now: number = Date.now()): number | null {
  if (!headers) return null;
  const ms = headers.get("retry-after-ms");
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms) / 1000;
  const v = headers.get("retry-after")?.trim();
  if (!v) return null;
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v);
  const date = Date.parse(v);
  if (Number.isNaN(date)) return null;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

const CODE_BY_STATUS: Record<number, string> = {
  400: "bad_request",
  401: "unauthorized",
  402: "payment_required",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  408: "request_timeout",
  409: "conflict",
  410: "gone",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "validation_error",
  429: "rate_limited",
  500: "internal_error",
  501: "not_implemented",
  502: "bad_gateway",
  503: "service_unavailable",
  504: "upstream_timeout",
};

/** The code to use when the server sent none (callers dispatch on the code, so always give one). */
export function codeForStatus(status: number): string {
  return (
    CODE_BY_STATUS[status] ?? (status >= 500 ? "server_error" : status >= 400 ? "client_error" : "unexpected_status")
  );
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  413: "Payload Too Large",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** "404 Not Found": the status with its reason phrase (the server's, else the standard one), or the bare number. */
export function describeStatus(status: number, statusText?: string): string {
  const text = statusText?.trim() || STATUS_TEXT[status];
  return text ? `${status} ${text}` : String(status);
}

function nonJsonDetail(
  status: number,
  statusText: string | undefined,
  headers: Headers,
  text: string,
  where: string,
): string {
  const what = describeStatus(status, statusText);
  const type = headers.get("content-type") ?? "";
  if (!text.trim())
    return `The orkestr API at ${where} answered ${what} with an empty body.${status >= 500 ? " Try again in a moment." : ""}`;
  if (type.includes("html") || /^\s*</.test(text)) {
    const title = /<title[^>]*>([^<]{1,200})<\/title>/i.exec(text)?.[1]?.trim();
    return `The orkestr API at ${where} answered ${what} with an HTML page${title ? ` ("${title}")` : ""} instead of JSON, usually from a proxy or load balancer in front of it.${status >= 500 ? " Try again in a moment; if it persists, check the URL." : " Check the URL."}`;
  }
  const excerpt = text.replace(/\s+/g, " ").trim().slice(0, 200);
  return `The orkestr API at ${where} answered ${what}: ${excerpt}`;
}

function hintFor(code: string, status: number, retryAfter: number | null): string | undefined {
  const wait = retryAfter !== null ? `in ${formatSeconds(retryAfter * 1000)}` : "in a moment";
  switch (code) {
    case "unauthorized":
      return "Check the API token of this orkestr connection.";
    case "insufficient_scope":
      return "Use a token that has the required scope.";
    case "trial_exhausted":
      return "The trial credit is used up; add a payment method to continue.";
    case "fleet_full":
      return `orkestr has no free capacity right now; try again ${wait}.`;
    case "rate_limited":
      return `Too many requests; try again ${wait}.`;
    case "not_implemented":
      return "This orkestr server does not offer this feature.";
    default:
      if (status >= 500 && status !== 501) return `Try again ${wait}.`;
      return undefined;
  }
}

function describeCause(cause: unknown): string {
  let c: unknown = cause;
  // undici wraps the system error: TypeError("fetch failed", { cause: Error{code: "ECONNREFUSED"} }).
  for (let depth = 0; depth < 4 && c && typeof c === "object"; depth++) {
    const e = c as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof e.code === "string" && /^E[A-Z_]+$|^UND_ERR/.test(e.code))
      return `${e.code}${typeof e.message === "string" && e.message ? `: ${e.message}` : ""}`;
    if (!e.cause) return typeof e.message === "string" ? e.message : "";
    c = e.cause;
  }
  return "";
}

function formatSeconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

/**
 * The one sentence the UI shows for an error: the server's `detail` for an OrkestrError (what the
 * browser core throws for every failed call), an Error's message, else `fallback`.
 */
export function errorText(error: unknown, fallback = "Something went wrong. Try again."): string {
  if (error instanceof OrkestrError) return error.detail;
  if (error instanceof Error && error.message) return error.message;
  return typeof error === "string" && error ? error : fallback;
}

/** `error` as an OrkestrError (status 0, code "error" for anything else), for UI state typed by it. */
export function asOrkestrError(error: unknown): OrkestrError {
  return error instanceof OrkestrError
    ? error
    : new OrkestrError({ status: 0, code: "error", detail: errorText(error) });
}
