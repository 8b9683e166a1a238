// A stand-in for `next` (see register.mjs): its request handler answers with what reached it, the
// URL and the headers, so a test can see what the console server let through and how it rewrote it.
import { AsyncLocalStorage } from "node:async_hooks";

// What Next installs before the relay's session code (next/headers) is imported.
globalThis.AsyncLocalStorage ??= AsyncLocalStorage;

// `httpServer` is where Next attaches its own upgrade listener (dev HMR): the stand-in answers 418
// there, so a test sees which upgrades the console server handed to Next.
export default function next({ httpServer } = {}) {
  httpServer?.on("upgrade", (req, socket) =>
    socket.end("HTTP/1.1 418 I'm a teapot\r\nX-Stub: next\r\nContent-Length: 0\r\n\r\n"),
  );
  return {
    prepare: async () => undefined,
    getRequestHandler: () => (req, res) => {
      res.setHeader("content-type", "application/json");
      res.setHeader("x-stub", "next");
      res.end(JSON.stringify({ url: req.url, headers: req.headers }));
    },
  };
}
