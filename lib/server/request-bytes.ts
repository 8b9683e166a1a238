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
