import "server-only";
import { describe, expect, it } from "vitest";
import { DELETE as deleteConnection, PATCH as patchConnection } from "../../app/api/connections/[id]/route";
import { POST as localEngine } from "../../app/api/connections/local-engine/route";
import { GET as list, POST as create } from "../../app/api/connections/route";
import { GET as status } from "../../app/api/connections/status/route";
import { listAuditEvents } from "../../lib/server/db/audit";
import { testBackends } from "../../lib/server/db/test-backends";
import { useLocalEngine } from "./engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, useConsoleDb } from "./helpers";

const idParams = (id: string) => ({ params: Promise.resolve({ id }) });

describe.each(testBackends)("connections API on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));
  const eng = ctx;

  async function signedIn(role: "owner" | "member" | "viewer" = "owner") {
    const { user } = await makeUser(ctx.db(), role);
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    return { user, cookie };
  }

  async function listOf(cookie: string) {
    const res = await list(request("/api/connections", { cookie }), noParams);
    expect(res.status).toBe(200);
    return (await res.json()) as {
      connections: Array<Record<string, unknown>>;
      local_engine: { available: boolean; reason: string | null };
    };
  }

  it("needs a session", async () => {
    expect((await list(request("/api/connections"), noParams)).status).toBe(401);
    expect((await status(request("/api/connections/status"), noParams)).status).toBe(401);
  });

  it("starts empty, with the local engine available, and a status of none", async () => {
    const { cookie } = await signedIn();
    const body = await listOf(cookie);
    expect(body.connections).toEqual([]);
    expect(body.local_engine).toMatchObject({ available: true, reason: null });
    const s = await jsonOf(await status(request("/api/connections/status", { cookie }), noParams));
    expect(s).toMatchObject({ state: "none", connection: null });
  });

  it("connects the local engine in one click: saved active, hint only, status ok naming it, audited", async () => {
    const { user, cookie } = await signedIn();
    const res = await localEngine(request("/api/connections/local-engine", { method: "POST", cookie }), noParams);
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(text).not.toMatch(/ork_[A-Za-z0-9_-]{8,}/); // a hint is ork_…abcd, never a whole token
    const { connection } = JSON.parse(text) as { connection: Record<string, unknown> };
    expect(connection).toMatchObject({
      name: "Local engine",
      base_url: eng.engine().origin,
      is_active: true,
      is_local_engine: true,
      last_error: null,
    });
    expect(connection.token_hint).toMatch(/^ork_…[A-Za-z0-9_-]{4}$/);
    expect(Object.keys(connection)).not.toContain("token");

    const s = await jsonOf(await status(request("/api/connections/status", { cookie }), noParams));
    expect(s).toMatchObject({
      state: "ok",
      code: null,
      connection: { name: "Local engine", host: new URL(eng.engine().origin).host },
    });

    const events = (await listAuditEvents(ctx.db(), { userId: user.id })).filter(
      (e) => e.action === "connection.local_engine",
    );
    expect(events).toHaveLength(1);
    expect(JSON.stringify(events)).not.toMatch(/ork_[A-Za-z0-9_-]{8,}/);
  });

  it("refuses a bad token with a clear error on the token field, and saves nothing", async () => {
    const { cookie } = await signedIn();
    const res = await create(
      request("/api/connections", {
        method: "POST",
        cookie,
        body: { name: "Wrong", base_url: eng.engine().origin, token: "ork_thisisnotarealtoken0000" },
      }),
      noParams,
    );
    expect(res.status).toBe(422);
    const body = await jsonOf(res);
    expect(body).toMatchObject({ code: "bad_token", field: "token" });
    expect(String(body.detail)).toMatch(/token/i);
    expect(JSON.stringify(body)).not.toContain("ork_thisisnotarealtoken0000");
    expect((await listOf(cookie)).connections).toEqual([]);

    const malformed = await jsonOf(
      await create(
        request("/api/connections", {
          method: "POST",
          cookie,
          body: { name: "X", base_url: "https://api.orkestr.eu", token: "hunter2 secret" },
        }),
        noParams,
      ),
    );
    expect(malformed).toMatchObject({ code: "invalid_token_format", field: "token" });
    expect(JSON.stringify(malformed)).not.toContain("hunter2");
  });

  it("refuses private addresses (SSRF) on the base_url field", async () => {
    const { cookie } = await signedIn();
    const res = await create(
      request("/api/connections", {
        method: "POST",
        cookie,
        body: { name: "Inside", base_url: "http://10.1.2.3", token: "ork_abcdefghijklmnop" },
      }),
      noParams,
    );
    expect(res.status).toBe(422);
    expect(await jsonOf(res)).toMatchObject({
      code: expect.stringMatching(/^(private_address|invalid_url)$/),
      field: "base_url",
      detail: expect.stringMatching(/10\.1\.2\.3|private|https/),
    });
    const v6 = await jsonOf(
      await create(
        request("/api/connections", {
          method: "POST",
          cookie,
          body: { name: "Meta", base_url: "https://169.254.169.254", token: "ork_abcdefghijklmnop" },
        }),
        noParams,
      ),
    );
    expect(v6).toMatchObject({ code: "private_address", field: "base_url" });
    expect((await listOf(cookie)).connections).toEqual([]);
  });

  it("adds, replaces (bad then good), activates and removes a connection; never answers the token", async () => {
    const { user, cookie } = await signedIn("member");
    const token = await eng.engine().mint(["sandboxes:read", "sandboxes:write"]);
    const res = await create(
      request("/api/connections", {
        method: "POST",
        cookie,
        body: { name: "Minted", base_url: eng.engine().origin, token },
      }),
      noParams,
    );
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.slice(4, -4));
    const minted = (JSON.parse(text) as { connection: { id: string; token_hint: string; is_active: boolean } })
      .connection;
    expect(minted.is_active).toBe(true);
    expect(minted.token_hint).toBe(`ork_…${token.slice(-4)}`);

    const dup = await create(
      request("/api/connections", {
        method: "POST",
        cookie,
        body: { name: "Minted", base_url: eng.engine().origin, token },
      }),
      noParams,
    );
    expect(dup.status).toBe(409);
    expect(await jsonOf(dup)).toMatchObject({ code: "connection_name_taken", field: "name" });

    const local = (
      await jsonOf(await localEngine(request("/api/connections/local-engine", { method: "POST", cookie }), noParams))
    ).connection as { id: string };
    expect((await listOf(cookie)).connections.find((c) => c.id === local.id)).toMatchObject({ is_active: true });

    // A bad replacement keeps the old token.
    const bad = await patchConnection(
      request(`/api/connections/${minted.id}`, { method: "PATCH", cookie, body: { token: "ork_notvalidatallxxxx" } }),
      idParams(minted.id),
    );
    expect(bad.status).toBe(422);
    expect(await jsonOf(bad)).toMatchObject({ code: "bad_token", field: "token" });
    const other = await eng.engine().mint(["sandboxes:read", "sandboxes:write"]);
    const good = await patchConnection(
      request(`/api/connections/${minted.id}`, { method: "PATCH", cookie, body: { token: other } }),
      idParams(minted.id),
    );
    expect(good.status).toBe(200);
    const goodText = await good.text();
    expect(goodText).not.toContain(other);
    expect(JSON.parse(goodText).connection.token_hint).toBe(`ork_…${other.slice(-4)}`);

    const act = await patchConnection(
      request(`/api/connections/${minted.id}`, { method: "PATCH", cookie, body: { active: true } }),
      idParams(minted.id),
    );
    expect(act.status).toBe(200);
    expect((await jsonOf(act)).connection).toMatchObject({ id: minted.id, is_active: true });
    const empty = await patchConnection(
      request(`/api/connections/${minted.id}`, { method: "PATCH", cookie, body: {} }),
      idParams(minted.id),
    );
    expect(empty.status).toBe(422);

    // Another user cannot see or touch it.
    const stranger = await signedIn();
    expect(
      (
        await deleteConnection(
          request(`/api/connections/${minted.id}`, { method: "DELETE", cookie: stranger.cookie }),
          idParams(minted.id),
        )
      ).status,
    ).toBe(404);

    const del = await deleteConnection(
      request(`/api/connections/${minted.id}`, { method: "DELETE", cookie }),
      idParams(minted.id),
    );
    expect(del.status).toBe(200);
    expect((await jsonOf(del)).active).toMatchObject({ id: local.id, is_active: true });
    expect(
      (
        await deleteConnection(
          request(`/api/connections/${minted.id}`, { method: "DELETE", cookie }),
          idParams(minted.id),
        )
      ).status,
    ).toBe(404);

    const events = await listAuditEvents(ctx.db(), { userId: user.id });
    expect(events.map((e) => e.action)).toEqual(
      expect.arrayContaining([
        "connection.create",
        "connection.local_engine",
        "connection.token_replace",
        "connection.activate",
        "connection.delete",
      ]),
    );
    const audit = JSON.stringify(events);
    for (const t of [token, other]) {
      expect(audit).not.toContain(t);
      expect(audit).not.toContain(t.slice(4, -4));
    }
  });

  it("refuses cross-site mutations and viewers, saving nothing", async () => {
    const { cookie } = await signedIn();
    const crossSite = await localEngine(
      request("/api/connections/local-engine", {
        method: "POST",
        cookie,
        headers: { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      }),
      noParams,
    );
    expect(crossSite.status).toBe(403);
    expect(await jsonOf(crossSite)).toMatchObject({ code: "bad_origin" });
    expect((await listOf(cookie)).connections).toEqual([]);

    const viewer = await signedIn("viewer");
    const denied = await localEngine(
      request("/api/connections/local-engine", { method: "POST", cookie: viewer.cookie }),
      noParams,
    );
    expect(denied.status).toBe(403);
    expect(await jsonOf(denied)).toMatchObject({ code: "forbidden" });
    // Viewers still see their (empty) list and status.
    expect((await listOf(viewer.cookie)).connections).toEqual([]);
  });
});
