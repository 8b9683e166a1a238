import "server-only";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { testBackends } from "../../lib/server/db/test-backends";
import {
  authorizeRelay,
  createPtyRelay,
  matchPtyRelayPath,
  originAllowed,
  type PtyRelay,
} from "../../lib/server/pty-relay";
import { HEARTBEAT_PING, HEARTBEAT_PONG } from "../../lib/terminal-heartbeat";
import { makeUser, sessionCookie, useConsoleDb } from "./helpers";

// The terminal WebSocket relay: the same session, permission and Origin checks as route() before
// any upgrade, and frames piped unchanged to an upstream that gets the token (a stand-in engine here).

const HOST = "baton.test";
const ORIGIN = `http://${HOST}`;

describe("relay paths and Origin", () => {
  it("matches only the PTY WebSocket path, with safe ids", () => {
    expect(matchPtyRelayPath("/api/v1/sandboxes/sbx_1/pty/pty_2/ws")).toEqual({ sandboxId: "sbx_1", ptyId: "pty_2" });
    expect(matchPtyRelayPath("/api/v1/sandboxes/sbx_1/pty/pty_2/ws?x=1")).toEqual({
      sandboxId: "sbx_1",
      ptyId: "pty_2",
    });
    for (const bad of [
      "/api/v1/sandboxes/sbx_1/pty/pty_2",
      "/api/v1/sandboxes/../pty/x/ws",
      "/api/v1/sandboxes/a%2Fb/pty/x/ws",
      "/_next/webpack-hmr",
      undefined,
    ]) {
      expect(matchPtyRelayPath(bad)).toBeNull();
    }
  });

  it("wants an Origin that is one of Baton's own (BATON_URL), never merely the request's Host", () => {
    vi.stubEnv("BATON_URL", ORIGIN);
    try {
      expect(originAllowed({ host: HOST, origin: ORIGIN })).toBe(true);
      expect(originAllowed({ host: "127.0.0.1:3000", origin: ORIGIN })).toBe(true);
      expect(originAllowed({ host: HOST })).toBe(false);
      expect(originAllowed({ host: HOST, origin: "http://evil.example" })).toBe(false);
      expect(originAllowed({ host: HOST, origin: "null" })).toBe(false);
      expect(originAllowed({ host: HOST, origin: `ftp://${HOST}` })).toBe(false);
      // A rebinding page names itself in both; X-Forwarded-Host is the sender's word too.
      expect(originAllowed({ host: "evil.example", origin: "http://evil.example" })).toBe(false);
      expect(originAllowed({ host: HOST, "x-forwarded-host": "evil.example", origin: "http://evil.example" })).toBe(
        false,
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe.each(testBackends)("the relay on $name", (backend) => {
  const ctx = useConsoleDb(backend);
  let upstream: WebSocketServer;
  let upstreamUrl: string;
  const upstreamAuth: string[] = [];
  const relayLog: string[] = [];
  let server: http.Server;
  let relay: PtyRelay;
  let url: string;

  beforeAll(async () => {
    // A stand-in engine: replays "backlog", echoes binary frames, answers 404 for session "gone".
    const upstreamServer = http.createServer();
    upstream = new WebSocketServer({ noServer: true });
    upstreamServer.on("upgrade", (req, socket, head) => {
      upstreamAuth.push(String(req.headers.authorization));
      if (req.url?.includes("/pty/gone/")) {
        const body = JSON.stringify({
          detail: "PTY session gone not found in sandbox sbx_1",
          code: "session_not_found",
        });
        socket.end(
          `HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        );
        return;
      }
      if (req.url?.includes("/pty/broken/")) {
        const body = JSON.stringify({
          detail: "pty broker pty-7.internal:7002 refused: ECONNREFUSED",
          code: "internal_error",
        });
        socket.end(
          `HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        );
        return;
      }
      upstream.handleUpgrade(req, socket, head, (ws) => {
        ws.send(Buffer.from("backlog"), { binary: true });
        // "mute": a session whose socket stops being read (no pong ever comes back), as when the
        // network to the upstream dies without a FIN.
        if (req.url?.includes("/pty/mute/")) setTimeout(() => socket.pause(), 50);
        ws.on("message", (data, isBinary) => ws.send(data, { binary: isBinary }));
      });
    });
    await new Promise<void>((r) => upstreamServer.listen(0, "127.0.0.1", r));
    upstreamUrl = `http://127.0.0.1:${(upstreamServer.address() as AddressInfo).port}/v1`;

    relay = createPtyRelay({
      upstreamFor: async () => ({
        baseUrl: upstreamUrl,
        isLocalEngine: true,
        headers: { Authorization: "Bearer ork_test_upstream_token" },
      }),
      log: (message) => relayLog.push(message),
      pingMs: 200,
    });
    server = http.createServer((_req, res) => res.end());
    server.on("upgrade", (req, socket, head) => {
      if (!relay.handleUpgrade(req, socket, head)) socket.destroy();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/sandboxes/sbx_1/pty`;
    return async () => {
      relay.close();
      server.close();
      upstream.close();
      upstreamServer.close();
    };
  });

  /** Opens a socket through the relay: the HTTP status of a refusal, or the open socket. */
  function connect(
    pty: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: string } | { ws: WebSocket }> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${url}/${pty}/ws`, { headers: { host: HOST, ...headers } });
      ws.on("open", () => resolve({ ws }));
      ws.on("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.on("error", reject);
    });
  }

  it("refuses without a session (401), from another origin (403) and for a viewer (403)", async () => {
    const owner = await makeUser(ctx.db(), "owner");
    const { cookie } = await sessionCookie(ctx.db(), owner.user.id);

    const anonymous = await connect("pty_1", { origin: ORIGIN });
    expect(anonymous).toMatchObject({ status: 401 });
    expect(JSON.parse((anonymous as { body: string }).body)).toMatchObject({ code: "unauthorized" });

    const forged = await connect("pty_1", { origin: ORIGIN, cookie: `${cookie.split("=")[0]}=garbage` });
    expect(forged).toMatchObject({ status: 401 });

    const crossSite = await connect("pty_1", { origin: "http://evil.example", cookie });
    expect(crossSite).toMatchObject({ status: 403 });
    expect(JSON.parse((crossSite as { body: string }).body)).toMatchObject({ code: "bad_origin" });
    expect(await connect("pty_1", { cookie })).toMatchObject({ status: 403 });

    const viewer = await makeUser(ctx.db(), "viewer");
    const viewerCookie = (await sessionCookie(ctx.db(), viewer.user.id)).cookie;
    const refused = await connect("pty_1", { origin: ORIGIN, cookie: viewerCookie });
    expect(refused).toMatchObject({ status: 403 });
    expect(JSON.parse((refused as { body: string }).body)).toMatchObject({ code: "forbidden" });

    const teamless = await makeUser(ctx.db(), null);
    expect(
      await connect("pty_1", { origin: ORIGIN, cookie: (await sessionCookie(ctx.db(), teamless.user.id)).cookie }),
    ).toMatchObject({ status: 403 });

    const expired = await sessionCookie(ctx.db(), owner.user.id, { ttlMs: 1, now: Date.now() - 60_000 });
    expect(await connect("pty_1", { origin: ORIGIN, cookie: expired.cookie })).toMatchObject({ status: 401 });
    expect(upstreamAuth).toEqual([]); // nothing reached the upstream
  });

  it("refuses a Host name Baton does not serve (421), even with a session and a matching Origin", async () => {
    const member = await makeUser(ctx.db(), "member");
    const { cookie } = await sessionCookie(ctx.db(), member.user.id);
    const rebinding = await connect("pty_1", { host: "evil.example", origin: "http://evil.example", cookie });
    expect(rebinding).toMatchObject({ status: 421 });
    expect(JSON.parse((rebinding as { body: string }).body)).toMatchObject({ code: "host_not_allowed" });
    expect(upstreamAuth).toEqual([]);
  });

  it("lets a member through, adds the token upstream only, and pipes frames both ways", async () => {
    const member = await makeUser(ctx.db(), "member");
    const { cookie } = await sessionCookie(ctx.db(), member.user.id);
    expect(await authorizeRelay({ host: HOST, origin: ORIGIN, cookie })).toMatchObject({
      ok: true,
      userId: member.user.id,
      team: { role: "member", team: { id: member.teamId } },
    });

    const result = await connect("pty_1", { origin: ORIGIN, cookie });
    if (!("ws" in result)) throw new Error(`refused: ${result.status} ${result.body}`);
    const { ws } = result;
    const received: string[] = [];
    const got = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (received.length >= n ? resolve() : setTimeout(check, 10));
        check();
      });
    ws.on("message", (data, isBinary) => received.push(`${isBinary ? "bin" : "text"}:${String(data)}`));
    ws.send(Buffer.from("ls\r"), { binary: true });
    ws.send(JSON.stringify({ type: "resize", cols: 100, rows: 30 }));
    await got(3);
    expect(received).toEqual(["bin:backlog", "bin:ls\r", 'text:{"type":"resize","cols":100,"rows":30}']);
    expect(upstreamAuth).toEqual(["Bearer ork_test_upstream_token"]);
    expect(received.join()).not.toContain("ork_");
    ws.close();
  });

  it("answers the browser's heartbeat itself, without troubling the upstream", async () => {
    const member = await makeUser(ctx.db(), "member");
    const { cookie } = await sessionCookie(ctx.db(), member.user.id);
    const result = await connect("pty_1", { origin: ORIGIN, cookie });
    if (!("ws" in result)) throw new Error(`refused: ${result.status} ${result.body}`);
    const { ws } = result;
    const received: string[] = [];
    ws.on("message", (data, isBinary) => received.push(`${isBinary ? "bin" : "text"}:${String(data)}`));
    ws.send(HEARTBEAT_PING);
    ws.send(Buffer.from("x"), { binary: true }); // the echo proves the ping went no further
    await expect.poll(() => received.length).toBe(3);
    expect(received.sort()).toEqual(["bin:backlog", "bin:x", `text:${HEARTBEAT_PONG}`].sort());
    ws.close();
  });

  /** Opens session `pty` as an owner (the upgrade must succeed) and waits for the relay to close it. */
  async function closeOf(pty: string): Promise<{ code: number; reason: string }> {
    const owner = await makeUser(ctx.db(), "owner");
    const { cookie } = await sessionCookie(ctx.db(), owner.user.id);
    const result = await connect(pty, { origin: ORIGIN, cookie });
    if (!("ws" in result)) throw new Error("expected the upgrade to succeed");
    return new Promise((resolve) =>
      result.ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
  }

  it("drops the browser with a retryable code when the upstream stops answering pings", async () => {
    expect(await closeOf("mute")).toEqual({ code: 4502, reason: "The terminal stopped answering." });
  });

  it("passes an upstream refusal on as a close code with its detail", async () => {
    expect(await closeOf("gone")).toEqual({ code: 4404, reason: "PTY session gone not found in sandbox sbx_1" });
  });

  it("an upstream 5xx closes with Baton's own words; the upstream's go to the log", async () => {
    expect(await closeOf("broken")).toEqual({
      code: 4500,
      reason: "The orkestr API had an internal error (500).",
    });
    expect(relayLog.join("\n")).toContain("pty-7.internal:7002");
  });
});
