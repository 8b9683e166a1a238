import "server-only";

// A request body the console server's fast path (lib/server/api-fast-path.ts) read whole before the
// handler ran, kept beside the Request: route()'s body reader takes the bytes as they are instead
// of reading them back out of the Request's web stream. Anything else reads the body as usual.

const bytesOf = new WeakMap<Request, Uint8Array>();

/** `req`, with its whole body `bytes` remembered. */
export function withKnownBytes(req: Request, bytes: Uint8Array): Request {
  bytesOf.set(req, bytes);
  return req;
}

/** The remembered body of a request nobody has read yet, else undefined. */
export function knownBytes(req: Request): Uint8Array | undefined {
  return req.bodyUsed ? undefined : bytesOf.get(req);
}
