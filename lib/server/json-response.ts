import "server-only";

// A JSON answer whose bytes are kept beside it, so that the console server's fast path
// (lib/server/api-fast-path.ts) writes them to the socket as they are, with their length, instead
// of reading them back out of the Response's web stream: the proxy answers every poll of every
// open tab with one of these, and that read is a chain of promise turns per answer. Anything else
// reading the Response (Next's own pipeline, a test) reads its body as usual.

const bytesOf = new WeakMap<Response, Buffer>();

/** Response.json(value, init), with its bytes remembered for the fast path. */
export function jsonResponse(value: unknown, init: ResponseInit = {}): Response {
  const bytes = Buffer.from(JSON.stringify(value), "utf8");
  const headers = new Headers(init.headers);
  if (!headers.has("content-type")) headers.set("content-type", "application/json");
  const response = new Response(bytes, { ...init, headers });
  bytesOf.set(response, bytes);
  return response;
}

/** The bytes of a jsonResponse() whose body nobody has read yet, else undefined. */
export function knownJsonBytes(response: Response): Buffer | undefined {
  const bytes = bytesOf.get(response);
  return bytes && !response.bodyUsed ? bytes : undefined;
}
