// A stand-in for `next` (see register.mjs): its request handler answers with what reached it, the
// URL and the headers, so a test can see what the console server let through and how it rewrote it.
import { AsyncLocalStorage } from "node:async_hooks";

// What Next installs before the relay's session code (next/headers) is imported.
globalThis.AsyncLocalStorage ??= AsyncLocalStorage;

export default function next() {
  return {
    prepare: async () => undefined,
    getRequestHandler: () => (req, res) => {
      res.setHeader("content-type", "application/json");
      res.setHeader("x-stub", "next");
      res.end(JSON.stringify({ url: req.url, headers: req.headers }));
    },
  };
}
