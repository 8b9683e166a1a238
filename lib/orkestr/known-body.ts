// A Response whose body a fetch implementation already read whole (lib/server/node-fetch.ts reads
// every small answer into one Buffer before making the Response) can carry those bytes beside it:
// the client core then decodes them as they are instead of reading them back out of the Response's
// web stream, a chain of promise turns on every proxied call. Any other reader (a file download
// passed through as a stream) reads the body as usual, and nothing is decoded for it.

const bodies = new WeakMap<Response, Uint8Array>();
const utf8 = new TextDecoder("utf-8");

/** `response`, with its whole body `bytes` remembered. */
export function withKnownBody(response: Response, bytes: Uint8Array): Response {
  bodies.set(response, bytes);
  return response;
}

/** The remembered body of a response nobody has read yet, as Response.text() would decode it, else undefined. */
export function knownText(response: Response): string | undefined {
  const bytes = response.bodyUsed ? undefined : bodies.get(response);
  return bytes && utf8.decode(bytes);
}
