import "server-only";
import { afterEach, describe, expect, it, vi } from "vitest";
import { POST as logout } from "../../app/api/auth/logout/route";
import { GET as me } from "../../app/api/me/route";
import { GET as listSandboxes, POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { deleteConnection, upsertConnection } from "../../lib/server/db/connections";
import { setMemberRole } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { SESSION_CACHE_TTL_MS } from "../../lib/server/session-cache";
import { encodeSessionJwt, readSessionId, SESSION_COOKIE } from "../../lib/server/session-cookie";
import { makeUser, noParams, request, sessionCookie, useConsoleDb } from "./helpers";

// The session check remembers a live session for SESSION_CACHE_TTL_MS (lib/server/session-cache.ts).
// What must still hold: a revocation, a disabled user or a changed role in this process counts at
// once; one made by another console instance on the same database counts within the TTL.

const meStatus = async (cookie: string) => (await me(request("/api/me", { cookie }), noParams)).status;

describe.each(testBackends)("the session memory on $name", (backend) => {
  const ctx = useConsoleDb(backend);
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a signed-out session is refused at once, though it was just answered from memory", async () => {
    const { user } = await makeUser(ctx.db());
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    expect(await meStatus(cookie)).toBe(200);
    expect(await meStatus(cookie)).toBe(200); // remembered now
    const out = await logout(request("/api/auth/logout", { method: "POST", cookie }), noParams);
    expect(out.status).toBe(200);
    expect(await meStatus(cookie)).toBe(401);
  });

  it("a revocation by another instance (a write this process did not make) counts within the TTL", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { user } = await makeUser(ctx.db());
    const { cookie, sessionId } = await sessionCookie(ctx.db(), user.id);
    expect(await meStatus(cookie)).toBe(200);
    // Another console process on the same database revokes it: nothing here hears of it.
    await ctx.db().updateTable("sessions").set({ revoked_at: Date.now() }).where("id", "=", sessionId).execute();
    vi.setSystemTime(Date.now() + SESSION_CACHE_TTL_MS);
    expect(await meStatus(cookie)).toBe(401);
  });

  it("a changed role counts at once", async () => {
    const { user, teamId } = await makeUser(ctx.db(), "member");
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const create = () =>
      createSandbox(request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "base" } }), noParams);
    // A member may create: the request gets as far as the (missing) connection.
    expect((await create()).status).toBe(409);
    await setMemberRole(ctx.db(), { teamId: teamId!, userId: user.id, role: "viewer" });
    const refused = await create();
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe("forbidden");
  });

  it("a removed connection's token is not used again, though its client was just remembered", async () => {
    const { user } = await makeUser(ctx.db(), "owner");
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const list = () => listSandboxes(request("/api/v1/sandboxes", { cookie }), noParams);
    // A connection whose server cannot be reached: the client is made (and remembered), the call fails.
    const conn = await upsertConnection(ctx.db(), {
      userId: user.id,
      name: "Unreachable",
      baseUrl: "https://orkestr.invalid",
      token: "ork_abcdefghijkl",
      activate: true,
    });
    expect((await list()).status).not.toBe(409);
    await deleteConnection(ctx.db(), user.id, conn.id);
    const after = await list();
    expect(after.status).toBe(409);
    expect(((await after.json()) as { code: string }).code).toBe("no_connection");
  });

  it("each copy of the vault module keeps its own clients (the console server runs two module graphs)", async () => {
    const { user } = await makeUser(ctx.db(), "owner");
    const conn = await upsertConnection(ctx.db(), {
      userId: user.id,
      name: "Somewhere",
      baseUrl: "https://orkestr.invalid",
      token: "ork_abcdefghijkl",
      activate: true,
    });
    // A fresh graph for this backend: one an earlier run of this test left behind still reads that run's database.
    vi.resetModules();
    const first = await import("../../lib/server/tokens");
    const client = await first.rememberedOrkestrFor(user.id, conn.id, { maxRetries: 0 });
    expect(await first.rememberedOrkestrFor(user.id, conn.id, { maxRetries: 0 })).toBe(client);
    // A second module graph in the same process (its own OrkestrClient and OrkestrError classes).
    vi.resetModules();
    const second = await import("../../lib/server/tokens");
    const core = await import("../../lib/orkestr/core");
    const own = await second.rememberedOrkestrFor(user.id, conn.id, { maxRetries: 0 });
    expect(own).not.toBe(client);
    expect(own).toBeInstanceOf(core.OrkestrClient);
  });

  it("a remembered session JWT still ends at its own expiry, and a forged one is never taken", async () => {
    const now = Date.now();
    const jwt = await encodeSessionJwt("sid-123", 60);
    const cookies = [{ name: SESSION_COOKIE, value: jwt }];
    expect(await readSessionId(cookies, now)).toBe("sid-123");
    expect(await readSessionId(cookies, now)).toBe("sid-123");
    expect(await readSessionId(cookies, now + 61_000)).toBeNull();
    const forged = [{ name: SESSION_COOKIE, value: `${jwt.slice(0, -4)}AAAA` }];
    expect(await readSessionId(forged, now)).toBeNull();
  });
});
