// A caller that reads a response's body only through knownText() (the client core, for every
// answer it parses as JSON) can say so on its fetch init. A fetch implementation that has read a
// body whole (lib/server/node-fetch.ts, for every small answer) then makes the Response without a
// body stream and keeps the bytes beside it: an undici Response built over bytes sets up a web
// stream, and its transfer machinery, that the core would only read back out through a chain of
// promise turns, on every proxied call. Without the mark (a file download streamed on, or any
// other caller) a fetch answers as fetch does.

const WANTS_KNOWN_BODY = Symbol("wants known body");
const bodies = new WeakMap<Response, Uint8Array>();
const utf8 = new TextDecoder("utf-8");

/** `init`, marked: the caller reads the answer's body with knownText() first. */
export function askForKnownBody<T extends object>(init: T): T {
  (init as Record<symbol, boolean>)[WANTS_KNOWN_BODY] = true;
  return init;
}

/** Whether the caller of fetch marked `init` with askForKnownBody(). */
export function wantsKnownBody(init: object | undefined): boolean {
  return (init as Record<symbol, boolean> | undefined)?.[WANTS_KNOWN_BODY] === true;
}

/** A Response for `bytes` with no body stream: only knownText() reads its body. */
export function bodilessResponse(bytes: Uint8Array, init: ResponseInit): Response {
  const response = new Response(null, init);
  bodies.set(response, bytes);
  return response;
}

/** The body of a bodilessResponse(), as Response.text() would decode it, else undefined (read it as usual). */
export function knownText(response: Response): string | undefined {
  const bytes = bodies.get(response);
  return bytes && utf8.decode(bytes);
}
