// The console's server: Next's request handler (exactly what `next start` or `next dev` serves:
// pages, route handlers, proxy.ts with its security headers and CSP) behind a plain node:http
// server, plus the one thing Next cannot do, WebSocket upgrades for the terminal relay
// (lib/server/pty-relay.ts). Used by `npm start` (scripts/start.mjs), `npm run dev` and the e2e fixture.
//
//   NODE_ENV=production node scripts/console-server.mjs [-p PORT] [-H HOST]   (after `next build`)
//   node scripts/console-server.mjs --dev [-p PORT] [-H HOST]                   (`npm run dev`: Next in dev mode, HMR)
//
// Every request and upgrade passes the front door first (lib/server/front-door.ts): Host names
// Baton does not serve get 421 (DNS rebinding), and the client's address is taken from the socket
// (or the BATON_TRUSTED_PROXIES hops of X-Forwarded-For) into a header only this server writes.
//
// Only the relay's and the front door's TypeScript goes through tsx (a namespaced registration), so
// Next loads its build output untouched. That code imports `server-only`, the marker whose default
// export throws; Next's server bundles resolve it under the `react-server` condition, to an empty
// module. The one hook below resolves that package (only that: the condition set process-wide would
// also switch React to its server build) the same way for the relay's graph.
import { EventEmitter } from "node:events";
import { register } from "node:module";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import next from "next";
import { register as registerTsx } from "tsx/esm/api";

const started = Date.now();
const { values } = parseArgs({
  options: {
    port: { type: "string", short: "p" },
    hostname: { type: "string", short: "H" },
    dev: { type: "boolean", default: false },
  },
  allowPositionals: false,
});
const dev = values.dev;
const port = Number(values.port ?? process.env.PORT ?? 3000);
const hostname = values.hostname ?? process.env.HOST ?? "127.0.0.1";
if (dev) process.env.NODE_ENV = "development";
else process.env.NODE_ENV ??= "production";
// The port the loopback Host names are served on (lib/host-policy.ts) is the one listened on.
process.env.PORT = String(port);
// next-auth builds its absolute URLs (redirects, future OIDC callbacks) from NEXTAUTH_URL, else
// from a default of http://localhost:3000: never from the request's Host. Baton's own origin it is.
if (process.env.BATON_URL?.trim() && !process.env.NEXTAUTH_URL) process.env.NEXTAUTH_URL = process.env.BATON_URL.trim();

const tsx = registerTsx({ namespace: "baton-console-server" });
register(
  "data:text/javascript," +
    encodeURIComponent(
      'export function resolve(s, c, n) { return n(s, s === "server-only" ? { ...c, conditions: [...c.conditions, "react-server"] } : c); }',
    ),
);

// Before Next starts: a bad BATON_URL, BATON_ALLOWED_HOSTS or BATON_TRUSTED_PROXIES stops here.
const { createConsoleServer, createFrontDoor } = await tsx.import("../lib/server/front-door.ts", import.meta.url);
let frontDoor;
try {
  frontDoor = createFrontDoor();
} catch (err) {
  console.error(`[baton] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}

// Next attaches its own upgrade listener to `httpServer` (else to the first request's server): in
// dev, HMR at /_next/hmr. Given this emitter instead, it sees only the upgrades the front door and
// the relay left, and only in dev (production has no upgrades of Next's own: those get 404).
const nextUpgrades = new EventEmitter();
const app = next({ dev, dir: new URL("..", import.meta.url).pathname, hostname, port, httpServer: nextUpgrades });
const handle = app.getRequestHandler();
await app.prepare();
// After Next set up its server environment: the session code imports next/headers, which needs
// the AsyncLocalStorage global that Next installs.
const { createPtyRelay } = await tsx.import("../lib/server/pty-relay.ts", import.meta.url);

// First run: the setup code the owner account needs (lib/server/setup-code.ts), printed here.
const { announceSetupCode } = await tsx.import("../lib/server/setup-code.ts", import.meta.url);
try {
  await announceSetupCode();
} catch (err) {
  // Another vault key than the database's (lib/server/vault-key-check.ts): this instance could serve
  // nothing, so it does not start, and a balancer sends the requests to the instances that can.
  if (err?.code === "vault_key_mismatch") {
    console.error(`[baton] ${err.detail}`);
    process.exit(1);
  }
  // The database may not be up yet: the /setup page makes and prints the code on its first visit.
  console.error(
    `[baton] could not check for a first run at start: ${err instanceof Error ? err.message : String(err)}`,
  );
}

// The `/api/v1/**` route handlers (and /api/mcp), called straight from this server (lib/server/api-fast-path.ts):
// the same route files Next serves, loaded through tsx, without Next's request pipeline in front of
// every proxy call. In dev Next serves them (its reloads); BATON_API_FAST_PATH=0 leaves them to
// Next in production too (to compare, or to rule the fast path out).
let api;
if (!dev && process.env.BATON_API_FAST_PATH !== "0") {
  const { createApiFastPath, findApiRoutes } = await tsx.import("../lib/server/api-fast-path.ts", import.meta.url);
  const fastPath = createApiFastPath({
    // And the MCP endpoint (app/api/mcp): each tool call is one /api/v1 call made in-process, so
    // through Next's pipeline an MCP exec would pay that pipeline on top of the v1 call's cost.
    routes: [
      ...findApiRoutes(new URL("../app/api/v1", import.meta.url).pathname, "/api/v1"),
      ...findApiRoutes(new URL("../app/api/mcp", import.meta.url).pathname, "/api/mcp"),
    ],
    load: (file) => tsx.import(pathToFileURL(file).href, import.meta.url),
  });
  api = (req, res) => fastPath.handle(req, res);
  // Compiled ahead of the first call (a route module's first import takes tsx a moment).
  fastPath.preload().catch((err) => console.error("[baton] preloading the API routes:", err));
}

const relay = createPtyRelay();
const server = createConsoleServer({
  frontDoor,
  handle,
  api,
  upgrade: (req, socket, head) => relay.handleUpgrade(req, socket, head),
  nextUpgrade: dev ? (req, socket, head) => nextUpgrades.emit("upgrade", req, socket, head) : undefined,
});
server.listen(port, hostname, () => {
  // "Ready in" is what e2e/fixtures.ts waits for, as with `next start`.
  console.log(
    `  ✓ Ready in ${Date.now() - started}ms: http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`,
  );
  console.log(
    `  Host names served: ${frontDoor.hosts} (BATON_URL, BATON_ALLOWED_HOSTS); X-Forwarded-For hops trusted: ${frontDoor.trustedProxies}`,
  );
});

const stop = () => {
  relay.close();
  server.close(() => process.exit(0));
  server.closeAllConnections?.();
  setTimeout(() => process.exit(0), 5_000).unref();
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
