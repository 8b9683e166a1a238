import type { z } from "zod";
import { askForKnownBody, knownText } from "./known-body";
import {
  OrkestrAbortError,
  errorFromResponse,
  OrkestrConnectionError,
  OrkestrError,
  OrkestrParseError,
  OrkestrTimeoutError,
} from "./errors";
import { cursorOf, extractList } from "./pagination";
import { BaseImages } from "./resources/base-images";
import { Exec } from "./resources/exec";
import { Files } from "./resources/files";
import { Previews } from "./resources/previews";
import { Pty } from "./resources/pty";
import { Sandboxes } from "./resources/sandboxes";
import { Snapshots } from "./resources/snapshots";
import { Templates } from "./resources/templates";
import { Volumes } from "./resources/volumes";
import { Webhooks } from "./resources/webhooks";
import { buildQuery, type Query } from "./path";
import type { Page } from "./schemas/common";

/**
 * The one request core every resource method goes through (one typed client, not a fetch per call):
 * base URL normalisation, Bearer auth, JSON bodies, an AbortController timeout, bounded retries
 * with backoff and `Retry-After`, `Idempotency-Key` on creates, and zod-parsed responses.
 *
 * It only uses web-standard APIs (fetch, AbortController, TextDecoder, crypto.randomUUID), so the
 * same client runs server-side against orkestr and in the browser against Baton's own `/api`.
 */

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface OrkestrClientOptions {
  /** `https://api.orkestr.eu` or `https://api.orkestr.eu/v1` (C5), or a path such as `/api`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`. Omit for cookie-authenticated calls to Baton's own API. */
  token?: string | null;
  /** Injectable fetch (tests, instrumentation); defaults to the global one. */
  fetch?: FetchLike;
  /** Per attempt. Streams only wait this long for the response headers. Default 30 000. */
  timeoutMs?: number;
  /** Retries after the first attempt. Default 2. */
  maxRetries?: number;
  /** Total time one call may spend waiting between retries. Default 60. */
  retryMaxSeconds?: number;
  userAgent?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** fetch `credentials` (the browser client on Baton's `/api` keeps the default, same-origin). */
  credentials?: "omit" | "same-origin" | "include";
  /**
   * Redirects are not followed by default: a redirect could lead a server-side call to an address
   * the console refused as a base URL (SSRF). A 3xx becomes an OrkestrError naming the target.
   */
  followRedirects?: boolean;
  /** Test seams. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  now?: () => number;
  idempotencyKey?: () => string;
}

/** Per-call overrides, accepted as the last argument of every resource method. */
export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
  retryMaxSeconds?: number;
  headers?: Record<string, string>;
  /** Used instead of a generated key on creating POSTs. */
  idempotencyKey?: string;
}

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD";

export interface CoreRequest {
  method: Method;
  /** Built with the `path` tag, relative to the base URL (which ends in /v1). */
  path: string;
  query?: Query;
  /** JSON-encoded. */
  body?: unknown;
  /** Sent as is (raw file uploads). */
  rawBody?: Uint8Array | ReadableStream<Uint8Array> | string | Blob;
  headers?: Record<string, string>;
  /** Safe to retry on connection errors and 5xx although the method is not idempotent. */
  idempotent?: boolean;
  /** Add an `Idempotency-Key` (creating POSTs): also makes the call safe to retry. */
  idempotencyKey?: boolean;
  /** The body is a stream: the timeout covers only the wait for headers. */
  stream?: boolean;
  options?: RequestOptions;
}

const IDEMPOTENT_METHODS = new Set<Method>(["GET", "HEAD", "PUT", "DELETE"]);
const DEFAULTS = { timeoutMs: 30_000, maxRetries: 2, retryMaxSeconds: 60 };
/** Backoff without Retry-After: 0.5 s · 2^n, capped at 8 s, minus up to 25 % jitter. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;

/**
 * Accepts a base URL with or without `/v1` (C5) and returns it ending in `/v1`, no trailing slash.
 * Absolute URLs must be http(s); relative ones (browser, Baton's `/api`) must start with `/`.
 */
export function normalizeBaseUrl(input: string): string {
  const trimmed = (input ?? "").trim();
  const invalid = (why: string) =>
    new OrkestrError({
      status: 0,
      code: "invalid_base_url",
      detail: `"${trimmed}" is not a usable orkestr API URL: ${why}.`,
      hint: "Use a URL such as https://api.orkestr.eu.",
    });
  if (!trimmed) throw invalid("it is empty");
  if (/[?#]/.test(trimmed)) throw invalid("it must not contain a query or fragment");
  if (!trimmed.startsWith("/")) {
    let u: URL;
    try {
      u = new URL(trimmed);
    } catch {
      throw invalid("it is not a URL");
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") throw invalid("only http and https are supported");
    if (u.username || u.password) throw invalid("credentials belong in the token, not the URL");
  }
  const base = trimmed.replace(/\/+$/, "");
  return /\/v1$/.test(base) ? base : `${base}/v1`;
}

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

function randomKey(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID) return c.randomUUID();
  return `${Date.now().toString(16)}-${Math.random().toString(16).slice(2)}-${Math.random().toString(16).slice(2)}`;
}

function isBrowser(): boolean {
  const g = globalThis as { window?: unknown; document?: unknown };
  return typeof g.window !== "undefined" && typeof g.document !== "undefined";
}

export class OrkestrCore {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly retryMaxSeconds: number;
  private readonly token: string | null;
  private readonly fetchImpl: FetchLike;
  private readonly defaultHeaders: Record<string, string>;
  private readonly credentials?: "omit" | "same-origin" | "include";
  private readonly followRedirects: boolean;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly newKey: () => string;

  constructor(options: OrkestrClientOptions) {
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    this.token = options.token ?? null;
    const g = globalThis as { fetch?: FetchLike };
    if (!options.fetch && !g.fetch)
      throw new OrkestrError({
        status: 0,
        code: "no_fetch",
        detail: "No fetch implementation is available; pass one as options.fetch.",
      });
    // Looked up per call (a framework may patch it later) and never called as a method of this
    // object: browsers throw "Illegal invocation" for fetch with a foreign `this`.
    this.fetchImpl = options.fetch ?? ((input, init) => (g.fetch as FetchLike)(input, init));
    this.timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
    this.maxRetries = Math.max(0, options.maxRetries ?? DEFAULTS.maxRetries);
    this.retryMaxSeconds = Math.max(0, options.retryMaxSeconds ?? DEFAULTS.retryMaxSeconds);
    this.defaultHeaders = { ...(options.headers ?? {}) };
    const ua = options.userAgent ?? (isBrowser() ? undefined : "baton-orkestr-client/0.1");
    if (ua) this.defaultHeaders["User-Agent"] = ua;
    if (options.credentials) this.credentials = options.credentials;
    this.followRedirects = options.followRedirects ?? false;
    this.sleep = options.sleep ?? defaultSleep;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.newKey = options.idempotencyKey ?? randomKey;
  }

  /** Absolute (or base-relative) URL for a tagged path and query. */
  url(p: string, query?: Query): string {
    return `${this.baseUrl}${p}${buildQuery(query)}`;
  }

  /** The request, parsed with `schema`. An empty body parses `emptyAs` (default: an error). */
  async json<S extends z.ZodType>(req: CoreRequest & { schema: S; emptyAs?: unknown }): Promise<z.output<S>> {
    const { response, text } = await this.send(req);
    return this.parse(req, response, text ?? "", req.schema, req.emptyAs);
  }

  /** The request, body ignored (204 and friends). */
  async void(req: CoreRequest): Promise<void> {
    await this.send(req);
  }

  /** The successful upstream Response with its body unread: for streams and unbuffered proxying. */
  async response(req: CoreRequest): Promise<Response> {
    const { response } = await this.send({ ...req, stream: true });
    return response;
  }

  /**
   * A page of a list (GET /v1/sandboxes and every other list route), read tolerantly: a bare array
   * or `{items|data|sandboxes|results|<extraKeys>: [...]}`; the cursor from `X-Next-Cursor`,
   * `X-Next-Token`, `next_cursor` or `nextCursor`.
   */
  async list<S extends z.ZodType>(
    req: CoreRequest & { item: S; keys?: readonly string[] },
  ): Promise<Page<z.output<S>>> {
    const { response, text } = await this.send(req);
    const body = this.parseJson(req, response, text ?? "", []);
    const found = extractList(body, req.keys ?? []);
    if (!found) {
      throw this.parseError(
        req,
        response,
        "expected a list (a JSON array, or an object with items, data, sandboxes or results)",
        text ?? "",
      );
    }
    const items = found.items.map((item, i) => {
      const r = req.item.safeParse(item);
      if (!r.success)
        throw this.parseError(
          req,
          response,
          `item ${i}: ${summarizeIssues(r.error)}`,
          JSON.stringify(item).slice(0, 500),
          r.error,
        );
      return r.data as z.output<S>;
    });
    const nextCursor =
      cursorOf(response.headers.get("x-next-cursor")) ?? cursorOf(response.headers.get("x-next-token")) ?? found.cursor;
    return { items, nextCursor };
  }

  /** Sends with retries; throws OrkestrError for anything but a 2xx. */
  async send(req: CoreRequest): Promise<{ response: Response; text: string | null }> {
    const opts = req.options ?? {};
    const maxRetries = Math.max(0, opts.maxRetries ?? this.maxRetries);
    const budgetMs = Math.max(0, opts.retryMaxSeconds ?? this.retryMaxSeconds) * 1000;
    const key = req.idempotencyKey ? (opts.idempotencyKey ?? this.newKey()) : undefined;
    const retryable = IDEMPOTENT_METHODS.has(req.method) || req.idempotent === true || key !== undefined;
    let waitedMs = 0;
    for (let attempt = 0; ; attempt++) {
      let outcome: { response: Response; text: string | null } | OrkestrError;
      try {
        outcome = await this.once(req, key);
      } catch (e) {
        if (!(e instanceof OrkestrError)) throw e;
        outcome = e;
      }
      if (!(outcome instanceof OrkestrError)) return outcome;
      const decision = retryDecision(outcome, retryable);
      if (!decision || attempt >= maxRetries) throw outcome;
      const delay = decision.afterMs ?? this.backoff(attempt);
      if (waitedMs + delay > budgetMs) throw outcome;
      try {
        await this.sleep(delay, opts.signal);
      } catch (e) {
        throw new OrkestrAbortError({ method: req.method, url: this.url(req.path), cause: e });
      }
      waitedMs += delay;
    }
  }

  /** Exponential backoff with jitter for the n-th retry (0-based). */
  backoff(attempt: number): number {
    const base = Math.min(BACKOFF_BASE_MS * 2 ** attempt, BACKOFF_CAP_MS);
    return Math.round(base * (1 - this.random() * 0.25));
  }

  /** The client's (injectable) sleep. */
  delay(ms: number, signal?: AbortSignal): Promise<void> {
    return this.sleep(ms, signal);
  }

  private async once(
    req: CoreRequest,
    idempotencyKey: string | undefined,
  ): Promise<{ response: Response; text: string | null }> {
    const opts = req.options ?? {};
    const url = this.url(req.path, req.query);
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const userSignal = opts.signal;
    const ctx = { method: req.method, url };
    if (userSignal?.aborted) throw new OrkestrAbortError({ ...ctx, cause: userSignal.reason });

    // Header names are case-insensitive: set() keeps one value per name, the last one winning.
    const headers = new Headers({ Accept: "application/json" });
    const setAll = (h: Record<string, string> | undefined) =>
      Object.entries(h ?? {}).forEach(([k, v]) => headers.set(k, v));
    setAll(this.defaultHeaders);
    if (this.token) headers.set("Authorization", `Bearer ${this.token}`);
    let body: string | Uint8Array | ReadableStream<Uint8Array> | Blob | undefined;
    if (req.rawBody !== undefined) {
      body = req.rawBody;
      headers.set("Content-Type", "application/octet-stream");
    } else if (req.body !== undefined) {
      body = JSON.stringify(req.body);
      headers.set("Content-Type", "application/json");
    }
    if (idempotencyKey) headers.set("Idempotency-Key", idempotencyKey);
    setAll(req.headers);
    setAll(opts.headers);

    const controller = new AbortController();
    const onAbort = () => controller.abort(userSignal?.reason);
    userSignal?.addEventListener("abort", onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const failure = (e: unknown, during: string): OrkestrError => {
      if (e instanceof OrkestrError) return e;
      if (timedOut) return new OrkestrTimeoutError({ baseUrl: this.baseUrl, timeoutMs, ...ctx });
      if (userSignal?.aborted) return new OrkestrAbortError({ ...ctx, cause: e });
      return new OrkestrConnectionError({
        baseUrl: this.baseUrl,
        cause: e,
        ...(during === "request"
          ? {}
          : {
              detail: `The connection to the orkestr API at ${this.baseUrl} broke while reading the response. Try again.`,
            }),
        ...ctx,
      });
    };
    let keepAbortLink = false;
    try {
      const init: RequestInit & { duplex?: "half"; cache?: "no-store" } = {
        method: req.method,
        headers,
        body: body as RequestInit["body"],
        signal: controller.signal,
        redirect: this.followRedirects ? "follow" : "manual",
        // API answers are live state: never from a browser or framework data cache.
        cache: "no-store",
      };
      if (this.credentials) init.credentials = this.credentials;
      if (typeof ReadableStream !== "undefined" && body instanceof ReadableStream) init.duplex = "half";
      // Every answer but a stream's is read with knownText() first (lib/orkestr/known-body.ts).
      if (!req.stream) askForKnownBody(init);
      let response: Response;
      try {
        response = await this.fetchImpl(url, init);
      } catch (e) {
        throw failure(e, "request");
      }
      if (response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)) {
        const location = response.headers.get("location");
        await response.body?.cancel().catch(() => undefined);
        throw new OrkestrError({
          status: response.status || 302,
          code: "redirect_not_followed",
          detail: `The orkestr API at ${this.baseUrl} redirected the request${location ? ` to ${location}` : ""}.`,
          hint: "Use the final URL as the base URL of this connection.",
          headers: response.headers,
          ...ctx,
        });
      }
      if (!response.ok) {
        let text = "";
        try {
          text = knownText(response) ?? (await response.text());
        } catch (e) {
          if (timedOut || userSignal?.aborted) throw failure(e, "body");
        }
        throw errorFromResponse({
          status: response.status,
          statusText: response.statusText,
          headers: response.headers,
          text,
          baseUrl: this.baseUrl,
          now: this.now(),
          ...ctx,
        });
      }
      if (req.stream) {
        // The caller reads the body; the caller's signal must still be able to cancel it.
        keepAbortLink = true;
        return { response, text: null };
      }
      let text: string;
      try {
        text = knownText(response) ?? (await response.text());
      } catch (e) {
        throw failure(e, "body");
      }
      return { response, text };
    } finally {
      clearTimeout(timer);
      if (!keepAbortLink) userSignal?.removeEventListener("abort", onAbort);
    }
  }

  private parseJson(req: CoreRequest, response: Response, text: string, emptyAs: unknown): unknown {
    if (!text.trim()) {
      if (emptyAs !== undefined) return emptyAs;
      throw this.parseError(req, response, `the ${response.status} response has an empty body`, "");
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      const type = response.headers.get("content-type") ?? "unknown type";
      throw this.parseError(
        req,
        response,
        `the ${response.status} response is not JSON (${type})`,
        text.slice(0, 500),
        e,
      );
    }
  }

  private parse<S extends z.ZodType>(
    req: CoreRequest,
    response: Response,
    text: string,
    schema: S,
    emptyAs: unknown,
  ): z.output<S> {
    const body = this.parseJson(req, response, text, emptyAs);
    const r = schema.safeParse(body);
    if (!r.success) throw this.parseError(req, response, summarizeIssues(r.error), text.slice(0, 500), r.error);
    return r.data as z.output<S>;
  }

  parseError(
    req: Pick<CoreRequest, "method" | "path" | "query">,
    response: Response | null,
    problem: string,
    excerpt: string,
    cause?: unknown,
  ): OrkestrParseError {
    return new OrkestrParseError({
      baseUrl: this.baseUrl,
      upstreamStatus: response?.status ?? 0,
      problem,
      excerpt,
      method: req.method,
      url: this.url(req.path, req.query),
      cause,
    });
  }
}

/** Whether (and after how long) a failed attempt may be retried. */
export function retryDecision(err: OrkestrError, retryable: boolean): { afterMs?: number } | null {
  if (err instanceof OrkestrAbortError || err instanceof OrkestrParseError) return null;
  if (err instanceof OrkestrConnectionError) return retryable ? {} : null;
  if (err.headers?.get("x-should-retry") === "false") return null;
  const after = err.retryAfterSeconds !== null ? { afterMs: Math.max(0, err.retryAfterSeconds * 1000) } : {};
  // FleetFull is a capacity blip the request never got past: safe to repeat for any method.
  if (err.status === 503 && err.code === "fleet_full") return after;
  if (!retryable) return null;
  if (err.status === 408) return after;
  // concurrency_limit is a plan quota, not a rate: waiting will not free a slot.
  if (err.status === 429 && err.code !== "concurrency_limit") return after;
  if (err.status >= 500 && err.status !== 501 && err.status !== 505) return after;
  return null;
}

/** One line naming the first few schema mismatches: `status: expected string, received number`. */
export function summarizeIssues(err: z.ZodError): string {
  const parts = err.issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? i.path.map(String).join(".") : "(root)"}: ${i.message}`);
  if (err.issues.length > 3) parts.push(`and ${err.issues.length - 3} more`);
  return parts.join("; ");
}

/** The typed orkestr client: one field per resource, every call through one core. */
export class OrkestrClient {
  readonly core: OrkestrCore;
  readonly sandboxes: Sandboxes;
  readonly exec: Exec;
  readonly files: Files;
  readonly snapshots: Snapshots;
  readonly volumes: Volumes;
  readonly templates: Templates;
  readonly baseImages: BaseImages;
  readonly webhooks: Webhooks;
  readonly previews: Previews;
  readonly pty: Pty;

  constructor(options: OrkestrClientOptions) {
    this.core = new OrkestrCore(options);
    this.sandboxes = new Sandboxes(this.core);
    this.exec = new Exec(this.core);
    this.files = new Files(this.core);
    this.snapshots = new Snapshots(this.core);
    this.volumes = new Volumes(this.core);
    this.templates = new Templates(this.core);
    this.baseImages = new BaseImages(this.core);
    this.webhooks = new Webhooks(this.core);
    this.previews = new Previews(this.core);
    this.pty = new Pty(this.core);
  }

  /** The normalised base URL, ending in /v1. */
  get baseUrl(): string {
    return this.core.baseUrl;
  }
}

/**
 * `createOrkestrClient({ baseUrl, token })`: server-side against orkestr or the local engine, or
 * in the browser against Baton's `/api` (no token; the session cookie authenticates).
 */
export function createOrkestrClient(options: OrkestrClientOptions): OrkestrClient {
  return new OrkestrClient(options);
}
