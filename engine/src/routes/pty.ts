import { ServerResponse, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { z } from "zod";
import { accountOf, authenticate, requireScope } from "../auth.js";
import { ApiError } from "../errors.js";
import { NoContent, PtySession, PtySignalResult } from "../responses.js";
import { EnvMap } from "../schemas.js";
import { normalizeSignal, PTY_MAX_COLS, PTY_MAX_ROWS, PtyService } from "../services/pty.js";
import type { ResourcePlugin } from "./plugin.js";
import { leaseFor } from "./stream.js";

const Cols = z.number().int().min(1).max(PTY_MAX_COLS);
const Rows = z.number().int().min(1).max(PTY_MAX_ROWS);

const noNul = (s: string) => !s.includes("\0");
const PtyOpenBody = z.object({
  cols: Cols.default(80),
  rows: Rows.default(24),
  command: z
    .string()
    .min(1)
    .max(64 * 1024)
    .refine(noNul, "must not contain NUL")
    .default("/bin/bash -l"),
  cwd: z
    .string()
    .startsWith("/", "cwd must be an absolute path")
    .max(4096)
    .refine(noNul, "must not contain NUL")
    .default("/workspace"),
  env: EnvMap.refine((m) => Object.values(m).every(noNul), "env values must not contain NUL").default({}),
});
const PtyResizeBody = z.object({ cols: Cols, rows: Rows });
const PtySignalBody = z.object({ signal: z.string().min(1).max(16) });
const PtyParams = z.object({ id: z.string().min(1).max(64), pid: z.string().min(1).max(64) });
const SandboxParams = z.object({ id: z.string().min(1).max(64) });

/** The WebSocket endpoint; everything else arriving as an upgrade is answered as plain HTTP. */
const WS_PATH = /^\/v1\/sandboxes\/[^/?#]+\/pty\/[^/?#]+\/ws\/?$/;
/** Client→server frame cap (input and control messages are small). */
const MAX_FRAME_BYTES = 1024 * 1024;
/**
 * A viewer cut off because its token was revoked or expired is closed with 4401 (4000 + the HTTP
 * status a request with that token now gets, as the console's relay numbers upstream refusals).
 */
export const CLOSE_TOKEN_REVOKED = 4401;
/** Idle kill override for tests and operators (milliseconds); belongs in config.ts. */
const IDLE_ENV = "ORKESTR_ENGINE_PTY_IDLE_MS";

/**
 * Interactive terminals (Baton extension, capabilities.pty): REST to open, list, resize, signal
 * and close sessions, and a WebSocket per session for the byte stream.
 */
export const ptyRoutes: ResourcePlugin = async (app, { ctx }) => {
  const tags = ["pty"];
  const idle = Number(process.env[IDLE_ENV]);
  const service = new PtyService(ctx, Number.isInteger(idle) && idle > 0 ? { idleMs: idle } : {});
  // Terminals of sandboxes the engine adopted at boot (services/sandboxes.ts) come back too.
  const adopted = await service.adoptAfterRestart();
  if (adopted) app.log.info(`${adopted} terminal session(s) of an earlier run adopted`);
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
  const pendingUpgrades = new WeakMap<IncomingMessage, { socket: Duplex; head: Buffer }>();

  /**
   * Upgrade requests bypass Fastify, so they are dispatched through its router here (as
   * @fastify/websocket does): the fault and auth hooks run, and a rejection is a normal JSON error
   * response written to the socket. Once any 'upgrade' listener exists Node hands it every request
   * carrying an Upgrade header (h2c too), so paths that are not ours are routed the same way and
   * answered as plain HTTP, unless another listener is there to claim them.
   */
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const pathname = (req.url ?? "").split("?")[0]!;
    const ours = WS_PATH.test(pathname);
    if (!ours && app.server.listenerCount("upgrade") > 1) return;
    socket.on("error", () => undefined);
    const length = req.headers["content-length"];
    if ((length !== undefined && length !== "0") || req.headers["transfer-encoding"] !== undefined) {
      // Its body is on the raw socket now, where nothing would feed it to a route.
      const body = JSON.stringify({ detail: "Upgrade is not supported on requests with a body", code: "bad_request" });
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    if (ours) pendingUpgrades.set(req, { socket, head });
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as never);
    res.on("finish", () => {
      socket.end();
      setTimeout(() => socket.destroy(), 1000).unref();
    });
    try {
      app.routing(req, res);
    } catch (e) {
      app.log.warn({ err: e }, "upgrade dispatch failed");
      socket.destroy();
    }
  };
  app.server.on("upgrade", onUpgrade);
  app.addHook("preClose", async () => {
    app.server.off("upgrade", onUpgrade);
    service.shutdown();
    for (const ws of wss.clients) ws.terminate();
    wss.close();
  });

  app.post(
    "/sandboxes/:id/pty",
    {
      schema: {
        tags,
        summary: "Start a terminal session",
        params: SandboxParams,
        body: PtyOpenBody,
        response: { 201: PtySession },
      },
    },
    async (req, reply) => {
      const s = await service.open(accountOf(req), req.params.id, req.body);
      return reply.status(201).send(s.view());
    },
  );

  app.get(
    "/sandboxes/:id/pty",
    {
      schema: {
        tags,
        summary: "A sandbox's terminal sessions (exited ones linger for a minute)",
        params: SandboxParams,
        response: { 200: z.array(PtySession) },
      },
    },
    async (req) => service.list(accountOf(req), req.params.id),
  );

  app.get(
    "/sandboxes/:id/pty/:pid",
    { schema: { tags, summary: "One terminal session", params: PtyParams, response: { 200: PtySession } } },
    async (req) => service.get(accountOf(req), req.params.id, req.params.pid).view(),
  );

  app.post(
    "/sandboxes/:id/pty/:pid/resize",
    {
      schema: {
        tags,
        summary: "Resize the terminal",
        params: PtyParams,
        body: PtyResizeBody,
        response: { 200: PtySession },
      },
    },
    async (req) => {
      const s = service.get(accountOf(req), req.params.id, req.params.pid);
      s.resize(req.body.cols, req.body.rows);
      return s.view();
    },
  );

  app.post(
    "/sandboxes/:id/pty/:pid/signal",
    {
      schema: {
        tags,
        summary: "Send a signal to the terminal's foreground process group",
        params: PtyParams,
        body: PtySignalBody,
        response: { 200: PtySignalResult },
      },
    },
    async (req) => {
      const { id, pid } = req.params;
      const { signal: raw } = req.body;
      let signal;
      try {
        signal = normalizeSignal(raw);
      } catch (e) {
        throw new ApiError("validation_error", [
          { loc: ["body", "signal"], msg: (e as ApiError).detail, type: "enum" },
        ]);
      }
      const s = service.get(accountOf(req), id, pid);
      return { id: s.id, signal, delivered: s.sendSignal(signal) };
    },
  );

  app.delete(
    "/sandboxes/:id/pty/:pid",
    { schema: { tags, summary: "Hang up and kill the session", params: PtyParams, response: { 204: NoContent } } },
    async (req, reply) => {
      service.close(service.get(accountOf(req), req.params.id, req.params.pid));
      return reply.status(204).send();
    },
  );

  // WebSocket: binary frames are terminal bytes both ways, text frames are JSON control messages;
  // {"type":"exit",…} then close 1000 when it ends.
  app.get(
    "/sandboxes/:id/pty/:pid/ws",
    {
      // The scope check below runs before the parameters are validated, as it did by hand.
      preValidation: async (req) => {
        // The /v1 hook authenticated the request for reading; driving a terminal is a write.
        requireScope(req.token ?? authenticate(ctx.db, req), "sandboxes:write");
      },
      schema: {
        tags,
        summary:
          "Attach to the session over a WebSocket (Upgrade: websocket; needs sandboxes:write). Counts among the " +
          "token's and the account's open streams (429 too_many_streams past ORKESTR_ENGINE_STREAMS_PER_TOKEN or " +
          '_PER_ACCOUNT); when the token is revoked or expires, the viewer gets {"type":"error",message} and a close ' +
          "with code 4401, and nothing it sends after that reaches the terminal",
        params: PtyParams,
      },
    },
    async (req, reply) => {
      const { id, pid } = req.params;
      const session = service.get(accountOf(req), id, pid);
      const pending = pendingUpgrades.get(req.raw);
      if (!pending)
        throw new ApiError(
          "bad_request",
          "This endpoint is a WebSocket: send Connection: Upgrade and Upgrade: websocket",
        );
      pendingUpgrades.delete(req.raw);
      let viewer: WebSocket | null = null;
      // Before the upgrade: past the caps this is a plain 429 on the socket, like any refusal here.
      const lease = leaseFor(req, ctx.streams, (why) => {
        if (!viewer) return void pending.socket.destroy();
        session.cutOff(viewer, CLOSE_TOKEN_REVOKED, why.code.replace("_", " "), why.detail);
      });
      // The socket closing is the one end of every path: a refused handshake, a viewer that left, a cut-off.
      pending.socket.once("close", () => lease.release());
      if (pending.socket.destroyed) lease.release();
      reply.hijack();
      wss.handleUpgrade(req.raw, pending.socket, pending.head, (ws) => {
        viewer = ws;
        session.attach(ws);
      });
    },
  );
};
