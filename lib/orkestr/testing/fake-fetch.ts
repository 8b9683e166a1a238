import type { FetchLike } from "../core";

/**
 * Test doubles for the client (used by lib/orkestr tests, usable by lib/server tests too):
 * an injectable fake fetch that records every request and replays scripted responses.
 */

export interface RecordedRequest {
  method: string;
  url: string;
  /** Path after the base URL's `/v1`, e.g. `/sandboxes/sbx_1`. */
  path: string;
  query: URLSearchParams;
  headers: Headers;
  /** JSON-parsed body, or the raw text when it is not JSON; undefined without a body. */
  body: unknown;
  signal: AbortSignal | null;
  /** The RequestInit as passed. */
  init: RequestInit;
}

export type Reply = Response | ((req: RecordedRequest, n: number) => Response | Promise<Response>);

export interface FakeFetch extends FetchLike {
  calls: RecordedRequest[];
}

/**
 * A fetch that answers from a script: either a function of the request, or a queue of replies
 * (the last one repeats). Each reply may be a Response (used once) or a function building one.
 */
export function fakeFetch(script: Reply | Reply[]): FakeFetch {
  const queue = Array.isArray(script) ? [...script] : null;
  const calls: RecordedRequest[] = [];
  const f = (async (input: string, init: RequestInit = {}) => {
    const url = new URL(input, "http://relative.invalid");
    const headers = new Headers(init.headers as ConstructorParameters<typeof Headers>[0]);
    let body: unknown;
    if (typeof init.body === "string") {
      try {
        body = JSON.parse(init.body);
      } catch {
        body = init.body;
      }
    } else if (init.body instanceof Uint8Array) {
      body = new TextDecoder().decode(init.body);
    }
    const req: RecordedRequest = {
      method: init.method ?? "GET",
      url: input,
      path: url.pathname.replace(/^.*?\/v1(?=\/)/, ""),
      query: url.searchParams,
      headers,
      body,
      signal: init.signal ?? null,
      init,
    };
    calls.push(req);
    const n = calls.length;
    const reply = queue ? (queue.length > 1 ? queue.shift()! : queue[0]!) : (script as Reply);
    if (init.signal?.aborted) throw init.signal.reason ?? new Error("aborted");
    return typeof reply === "function" ? reply(req, n) : reply;
  }) as FakeFetch;
  f.calls = calls;
  return f;
}

/** A JSON response. */
export function json(body: unknown, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return new Response(JSON.stringify(body), {
    status: init.status ?? 200,
    headers: { "Content-Type": "application/json", ...init.headers },
  });
}

/** A contract error response: `{detail, code, ...extra}`. */
export function apiError(
  status: number,
  code: string | undefined,
  detail: unknown,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Response {
  return json({ detail, ...(code !== undefined ? { code } : {}), ...extra }, { status, headers });
}

/** A body delivered in the given chunks (strings are UTF-8 encoded), one per read. */
export function chunked(chunks: readonly (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const c = chunks[i++];
      if (c === undefined) return controller.close();
      controller.enqueue(typeof c === "string" ? encoder.encode(c) : c);
    },
  });
}

/** A streaming response made of chunks. */
export function streamResponse(chunks: readonly (string | Uint8Array)[], contentType = "text/event-stream"): Response {
  return new Response(chunked(chunks), { status: 200, headers: { "Content-Type": contentType } });
}

/** A fetch failure as undici reports it. */
export function connectionRefused(): Error {
  return Object.assign(new TypeError("fetch failed"), {
    cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }),
  });
}

/** A fetch that never answers until its signal aborts. */
export function hangingFetch(): FakeFetch {
  return fakeFetch(
    (req) =>
      new Promise<Response>((_resolve, reject) => {
        req.signal?.addEventListener("abort", () => reject(req.signal?.reason ?? new Error("aborted")), { once: true });
      }),
  );
}

/** A sleep that records the waits instead of waiting. */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; waits: number[] } {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}
