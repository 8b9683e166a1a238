import "server-only";

// A request body the console server's fast path (lib/server/api-fast-path.ts) read whole before the
// handler ran is kept beside the Request rather than inside it: an undici Request built over bytes
// sets up a web stream (and its transfer machinery) on every proxied POST, only for route() to read
// the bytes back out. So a handler reads a request body only through these (route()'s body
// reader, requestBody() for one streamed on); api-fast-path.test.ts checks the route files do.

const bytesOf = new WeakMap<Request, Uint8Array>();

/** `req` (made without a body), with its whole body `bytes` remembered. */
export function withKnownBytes(req: Request, bytes: Uint8Array): Request {
  bytesOf.set(req, bytes);
  return req;
}

/** The remembered body of a request, else undefined (read `req.body` as usual). */
export function knownBytes(req: Request): Uint8Array | undefined {
  return bytesOf.get(req);
}

/** The request's body to pass on: the remembered bytes, or its stream (null without a body). */
export function requestBody(req: Request): Uint8Array | ReadableStream<Uint8Array> | null {
  return bytesOf.get(req) ?? req.body;
}

/**
 * requestBody() for a PUT whose link allows at most `maxBytes` (a signed upload link's max_bytes):
 * a declared Content-Length over it is refused before anything is sent on (`tooLarge()` true at
 * once); a chunked body is cut off the moment it passes the limit (its stream errors, so the
 * upstream write fails and is not completed), and `tooLarge()` then says why.
 */
export function requestBodyAtMost(
  req: Request,
  maxBytes: number,
): { body: Uint8Array | ReadableStream<Uint8Array> | null; tooLarge: () => boolean } {
  const declared = Number(req.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > maxBytes) return { body: null, tooLarge: () => true };
  const body = requestBody(req);
  if (body === null || body instanceof Uint8Array) {
    const over = (body?.byteLength ?? 0) > maxBytes;
    return { body: over ? null : body, tooLarge: () => over };
  }
  let total = 0;
  let over = false;
  const counted = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        total += chunk.byteLength;
        if (total > maxBytes) {
          over = true;
          controller.error(new Error(`the upload passed its link's max_bytes (${maxBytes})`));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return { body: counted, tooLarge: () => over };
}
