import "server-only";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { POST as logoutEverywhere } from "../../app/api/auth/logout-everywhere/route";
import { DELETE as revokeTokenRoute } from "../../app/api/tokens/[id]/route";
import { POST as createTokenRoute } from "../../app/api/tokens/route";
import { changeMemberRole, disableUser, removeTeamMember } from "../../lib/server/access";
import { ACCESS_RECHECK } from "../../lib/server/access-watch";
import { getActiveConnection } from "../../lib/server/db/connections";
import { addMember, createTeamWithOwner, slugify } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { createUser } from "../../lib/server/db/users";
import { createPtyRelay, type PtyRelay, type RelayGrant } from "../../lib/server/pty-relay";
import { connectLocalEngine, revokeEngineAccess } from "../../lib/server/tokens";
import { useLocalEngine } from "./engine-harness";
import { makeUser, noParams, request, sessionCookie, uniq, useConsoleDb } from "./helpers";

// An open terminal loses its right to go on (issue 20 item 3, the console's half): after a sign-out
// everywhere, a removal from the team, a disabled user, a role that no longer allows terminals, or
// the connection's engine token revoked, the relay stops passing the browser's keystrokes on within
// 5 s and closes the browser's socket with a code and a sentence saying what happened. The relay is
// the real one with its real re-check interval, the session, teams and tokens are real (a real
// local engine mints and revokes the tokens); the PTY upstream is a stand-in that records every
// keystroke that reaches it, so the console's part is measured on its own (the engine closing its
// own sockets on a revoked token is the engine's half, tested there).

const HOST = "baton.test";
const ORIGIN = `http://${HOST}`;
const LIMIT_MS = 5_000;

describe.each(testBackends)("an open terminal on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));
  /** Keystrokes that reached the stand-in upstream, per PTY id, with when. */
  const received = new Map<string, number[]>();
  /** The connection each relayed terminal went through. */
  const grants = new Map<string, RelayGrant>();
  let relay: PtyRelay;
  let url: string;

  beforeAll(async () => {
    const upstreamServer = http.createServer();
    const upstream = new WebSocketServer({ noServer: true });
    upstreamServer.on("upgrade", (req, socket, head) => {
      const pty = /\/pty\/([^/]+)\/ws/.exec(req.url ?? "")![1]!;
      upstream.handleUpgrade(req, socket, head, (ws) => {
        ws.send(Buffer.from("ready"), { binary: true });
        ws.on("message", (data, isBinary) => {
          if (!isBinary) return;
          (received.get(pty) ?? received.set(pty, []).get(pty)!).push(Date.now());
          ws.send(data, { binary: true });
        });
      });
    });
    await new Promise<void>((r) => upstreamServer.listen(0, "127.0.0.1", r));
    const upstreamUrl = `http://127.0.0.1:${(upstreamServer.address() as AddressInfo).port}/v1`;
    relay = createPtyRelay({
      upstreamFor: async (grant) => {
        grants.set(grant.sid!, grant);
        return { baseUrl: upstreamUrl, isLocalEngine: true, headers: { Authorization: "Bearer ork_stand_in" } };
      },
      log: () => undefined,
    });
    const server = http.createServer((_req, res) => res.end());
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

  /** A member of a fresh team, connected to the local engine (a real token of the team's account). */
  async function member() {
    const owner = await makeUser(ctx.db(), "owner");
    const user = await createUser(ctx.db(), { email: `${uniq("member")}@example.com`, passwordHash: null });
    await addMember(ctx.db(), { teamId: owner.teamId!, userId: user.id, role: "member" });
    await connectLocalEngine(user.id, { db: ctx.db(), teamId: owner.teamId!, label: "pty-revocation" });
    const session = await sessionCookie(ctx.db(), user.id);
    return { userId: user.id, teamId: owner.teamId!, ...session };
  }

  /** An API token of `cookie`'s user (POST /api/tokens, as Settings makes it). */
  async function apiToken(cookie: string, scope: "read" | "write"): Promise<{ token: string; id: string }> {
    const res = await createTokenRoute(
      request("/api/tokens", { method: "POST", cookie, body: { name: `relay ${scope}`, scope } }),
      noParams,
    );
    expect(res.status).toBe(201);
    const body = (await res.json()) as { token: string; api_token: { id: string } };
    return { token: body.token, id: body.api_token.id };
  }

  /** The orkestr SDK's terminal: `Authorization: Bearer bat_…`, no cookie, no Origin. */
  function openWithToken(pty: string, token: string): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${url}/${pty}/ws`, { headers: { host: HOST, authorization: `Bearer ${token}` } });
      ws.on("message", (data) => String(data) === "ready" && resolve(ws));
      ws.on("unexpected-response", (_req, res) => reject(new Error(`refused with ${res.statusCode}`)));
      ws.on("error", reject);
    });
  }

  function open(pty: string, cookie: string): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${url}/${pty}/ws`, { headers: { host: HOST, origin: ORIGIN, cookie } });
      ws.on("message", (data) => String(data) === "ready" && resolve(ws));
      ws.on("unexpected-response", (_req, res) => reject(new Error(`refused with ${res.statusCode}`)));
      ws.on("error", reject);
    });
  }

  /**
   * Opens a terminal, proves keystrokes go through, takes access away with `revoke`, and keeps
   * typing every 50 ms: when the socket closed, and when the last keystroke reached the upstream.
   */
  async function typeThrough(
    user: Awaited<ReturnType<typeof member>>,
    revoke: () => Promise<unknown>,
  ): Promise<{ code: number; reason: string; closedAfterMs: number; lastInputAfterMs: number }> {
    const pty = uniq("pty");
    const ws = await open(pty, user.cookie);
    ws.send(Buffer.from("x"), { binary: true });
    await expect.poll(() => received.get(pty)?.length ?? 0).toBe(1);
    expect(grants.get(user.token)?.team.connection?.id).toBe((await getActiveConnection(ctx.db(), user.userId))!.id);

    const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) =>
      ws.on("close", (code, reason) => resolve({ code, reason: reason.toString(), at: Date.now() })),
    );
    const t0 = Date.now();
    await revoke();
    const typing = setInterval(() => {
      if (ws.readyState === WebSocket.OPEN) ws.send(Buffer.from("k"), { binary: true });
    }, 50);
    const close = await Promise.race([closed, new Promise<null>((r) => setTimeout(() => r(null), LIMIT_MS + 3_000))]);
    clearInterval(typing);
    // Whatever was still on its way has arrived by now.
    await new Promise((r) => setTimeout(r, 300));
    expect(close, "the relay kept the terminal open").not.toBeNull();
    const last = Math.max(...(received.get(pty) ?? [t0]));
    return { code: close!.code, reason: close!.reason, closedAfterMs: close!.at - t0, lastInputAfterMs: last - t0 };
  }

  function expectStoppedInTime(r: { closedAfterMs: number; lastInputAfterMs: number }) {
    expect(r.closedAfterMs).toBeLessThanOrEqual(LIMIT_MS);
    expect(r.lastInputAfterMs).toBeLessThanOrEqual(r.closedAfterMs);
  }

  it("an API token opens a terminal (Bearer on the upgrade, no cookie), a read token is refused, and revoking it closes the terminal", async () => {
    const user = await member();
    const write = await apiToken(user.cookie, "write");
    const read = await apiToken(user.cookie, "read");
    await expect(openWithToken(uniq("pty"), read.token)).rejects.toThrow("refused with 403");
    await expect(openWithToken(uniq("pty"), "bat_not-a-token")).rejects.toThrow("refused with 401");
    const pty = uniq("pty");
    const ws = await openWithToken(pty, write.token);
    ws.send(Buffer.from("x"), { binary: true });
    await expect.poll(() => received.get(pty)?.length ?? 0).toBe(1);
    const closed = new Promise<number>((resolve) => ws.on("close", (code) => resolve(code)));
    const t0 = Date.now();
    const res = await revokeTokenRoute(request(`/api/tokens/${write.id}`, { method: "DELETE", cookie: user.cookie }), {
      params: Promise.resolve({ id: write.id }),
    });
    expect(res.status).toBeLessThan(300);
    expect(await closed).toBe(4401);
    expect(Date.now() - t0).toBeLessThanOrEqual(LIMIT_MS);
    await expect(openWithToken(uniq("pty"), write.token)).rejects.toThrow("refused with 401");
  });

  it("uses the real re-check interval (well inside the 5 s)", () => {
    expect(ACCESS_RECHECK.terminalMs).toBeLessThanOrEqual(2_000);
  });

  it("closes after a sign-out everywhere: 'Your session was signed out'", async () => {
    const user = await member();
    const other = await sessionCookie(ctx.db(), user.userId); // signs out everywhere from another browser
    const r = await typeThrough(user, async () => {
      const res = await logoutEverywhere(
        request("/api/auth/logout-everywhere", { method: "POST", cookie: other.cookie }),
        noParams,
      );
      expect(res.status).toBe(200);
    });
    expect(r).toMatchObject({ code: 4401, reason: "Your session was signed out or has expired. Sign in again." });
    expectStoppedInTime(r);
  }, 20_000);

  it("closes after a removal from the team, naming it", async () => {
    const user = await member();
    const r = await typeThrough(user, () => removeTeamMember({ teamId: user.teamId, userId: user.userId }));
    expect(r).toMatchObject({ code: 4403, reason: "You were removed from the team Team." });
    expectStoppedInTime(r);
  }, 20_000);

  it("closes after the user is disabled", async () => {
    const user = await member();
    const r = await typeThrough(user, () => disableUser(user.userId));
    expect(r).toMatchObject({ code: 4401, reason: expect.stringContaining("Your account was disabled") });
    expectStoppedInTime(r);
  }, 20_000);

  it("closes when the role no longer allows terminals", async () => {
    const user = await member();
    const r = await typeThrough(user, () =>
      changeMemberRole({ teamId: user.teamId, userId: user.userId, role: "viewer" }),
    );
    expect(r).toMatchObject({ code: 4403, reason: expect.stringMatching(/^Your role in Team is now viewer/) });
    expectStoppedInTime(r);
  }, 20_000);

  it("closes when the connection's engine token is revoked", async () => {
    const user = await member();
    const r = await typeThrough(user, () => revokeEngineAccess(user.userId, { teamId: user.teamId }));
    expect(r).toMatchObject({ code: 4409, reason: expect.stringMatching(/^The connection "Local engine" .* revoked/) });
    expectStoppedInTime(r);
  }, 20_000);

  it("is refused to a viewer of the team whose connection it uses, though they own another team", async () => {
    const db = ctx.db();
    const a = await makeUser(db, "owner");
    const user = await createUser(db, { email: `${uniq("two")}@example.com`, passwordHash: null });
    await createTeamWithOwner(db, { name: "B", slug: slugify(uniq("b")), ownerId: user.id, now: Date.now() - 60_000 });
    await addMember(db, { teamId: a.teamId!, userId: user.id, role: "viewer" });
    await connectLocalEngine(user.id, { db, teamId: a.teamId! });
    const { cookie } = await sessionCookie(db, user.id);
    await expect(open(uniq("pty"), cookie)).rejects.toThrow("refused with 403");
  });
});
