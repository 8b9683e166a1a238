import "server-only";
import http from "node:http";
import https from "node:https";
import { Readable } from "node:stream";
import type { FetchLike } from "../orkestr/core";
import { bodilessResponse, wantsKnownBody } from "../orkestr/known-body";

// fetch() on node:http/https for the orkestr client: the console's way to its upstreams (the local
// engine, and through lib/server/ssrf.ts's guard every other orkestr API).
// - One keep-alive agent per fetch (so per upstream kind): the API proxy reuses its connections
//   instead of opening one per call.
// - Cheaper per call than Node's built-in fetch (undici), which the proxy paid on every request.
// - A response with a known length up to SMALL_BODY bytes (every JSON answer) is read whole before
//   the Response is made: one Buffer, and for the client core's JSON reads no web stream at all
//   (lib/orkestr/known-body.ts). Anything else (SSE, NDJSON, files) streams unbuffered both ways.
// - Redirects are never followed (the client wants them manual). Failures reject like fetch:
//   TypeError("fetch failed", { cause }); an abort rejects with the signal's reason.

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
/**
 * An idle pooled socket is closed after this long: under the usual server keep-alive (Node's
 * default is 5 s), so the upstream rarely closes one just as a request is written on it.
 */
const IDLE_SOCKET_MS = 4_000;
/** Methods a request may be sent again for when a reused socket turned out to be closed. */
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);
const SMALL_BODY = 1024 * 1024;

export interface NodeFetchOptions {
  /** The connection's DNS lookup (the SSRF guard's); default the system's. */
  lookup?: http.RequestOptions["lookup"];
  /** The reason to refuse a URL before connecting (the fetch then fails with it as cause), or null. */
  refuse?: (url: URL) => Error | null;
}

/** A request body as bytes or a stream; only a Blob needs an await (every JSON body is a string). */
function bodyBytes(body: unknown): Buffer | Readable | null | Promise<Buffer> {
  if (body === undefined || body === null) return null;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (typeof Blob !== "undefined" && body instanceof Blob) return body.arrayBuffer().then((b) => Buffer.from(b));
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), "utf8");
  if (typeof ReadableStream !== "undefined" && body instanceof ReadableStream) {
    return Readable.fromWeb(body as import("node:stream/web").ReadableStream<Uint8Array>);
  }
  throw new TypeError("fetch: unsupported request body type");
}

export function createNodeFetch(opts: NodeFetchOptions = {}): FetchLike {
  // Own agents: with the SSRF guard, their pooled sockets only ever connected to checked addresses.
  const agents = {
    http: new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
    https: new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  };

  return async (input: string, init: RequestInit = {}): Promise<Response> => {
    const fail = (cause: unknown) => new TypeError("fetch failed", { cause });
    const url = new URL(input);
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw fail(new Error(`unsupported protocol ${url.protocol}`));
    const refused = opts.refuse?.(url);
    if (refused) throw fail(refused);

    const signal = init.signal ?? undefined;
    const knownBodyOk = wantsKnownBody(init);
    if (signal?.aborted) throw signal.reason ?? new DOMException("This operation was aborted", "AbortError");
    const method = (init.method ?? "GET").toUpperCase();
    const headers: Record<string, string> = {};
    (init.headers instanceof Headers ? init.headers : new Headers(init.headers)).forEach((v, k) => (headers[k] = v));
    const pending = bodyBytes(init.body);
    const body = pending instanceof Promise ? await pending : pending;
    if (Buffer.isBuffer(body)) headers["content-length"] = String(body.length);

    const mod = url.protocol === "https:" ? https : http;
    return new Promise<Response>((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        fn();
      };
      const send = (retried: boolean) => {
        const req = mod.request(url, {
          method,
          headers,
          ...(opts.lookup ? { lookup: opts.lookup } : {}),
          agent: url.protocol === "https:" ? agents.https : agents.http,
        });
        let answered = false;
        const onAbort = () => {
          const reason: unknown = signal?.reason ?? new DOMException("This operation was aborted", "AbortError");
          req.destroy(reason instanceof Error ? reason : new Error(String(reason)));
          settle(() => reject(reason));
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        req.on("error", (err: NodeJS.ErrnoException) => {
          signal?.removeEventListener("abort", onAbort);
          // A pooled socket the upstream had closed while it sat idle: the request never reached it,
          // so it is sent once more on a fresh socket, as Node's documentation advises (idempotent
          // methods with a body already in hand only), instead of a "may or may not have taken effect".
          const stale = req.reusedSocket && !answered && (err.code === "ECONNRESET" || err.code === "EPIPE");
          if (
            stale &&
            !retried &&
            !settled &&
            IDEMPOTENT.has(method) &&
            !(body instanceof Readable) &&
            !signal?.aborted
          )
            return send(true);
          settle(() => reject(fail(err)));
        });
        req.on("response", (res) => {
          answered = true;
          const status = res.statusCode ?? 502;
          const responseHeaders = new Headers();
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
            responseHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
          res.once("close", () => signal?.removeEventListener("abort", onAbort));
          const make = (body: ReadableStream<Uint8Array> | Uint8Array<ArrayBuffer> | null) =>
            settle(() => {
              try {
                const responseInit = { status, statusText: res.statusMessage ?? "", headers: responseHeaders };
                // The client core takes a whole body's bytes as they are (lib/orkestr/known-body.ts).
                resolve(
                  body instanceof Uint8Array && knownBodyOk
                    ? bodilessResponse(body, responseInit)
                    : new Response(body, responseInit),
                );
              } catch (err) {
                res.destroy();
                reject(fail(err));
              }
            });
          if (NULL_BODY_STATUSES.has(status) || method === "HEAD") {
            res.resume();
            return make(null);
          }
          const length = Number(res.headers["content-length"] ?? NaN);
          if (!(Number.isInteger(length) && length >= 0 && length <= SMALL_BODY))
            return make(Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => make(new Uint8Array(Buffer.concat(chunks))));
          // Cut off before its length (the upstream died): as fetch's body read would fail.
          res.on("error", (err) => settle(() => reject(fail(err))));
          res.on("close", () => {
            if (!res.complete) settle(() => reject(fail(new Error("the response ended before its Content-Length"))));
          });
        });
        if (body instanceof Readable) {
          body.on("error", (err) => req.destroy(err));
          body.pipe(req);
        } else {
          req.end(body ?? undefined);
        }
      };
      send(false);
    });
  };
}
