import "server-only";
import { describe, expect, it } from "vitest";
import { POST as localEngine } from "../../app/api/connections/local-engine/route";
import { POST as pause } from "../../app/api/v1/sandboxes/[id]/pause/route";
import { DELETE as terminate } from "../../app/api/v1/sandboxes/[id]/route";
import { GET as listSandboxes, POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { queryAuditEvents } from "../../lib/server/audit/query";
import { addMember } from "../../lib/server/db/teams";
import { refusedAction } from "../../lib/server/route";
import { testBackends } from "../../lib/server/db/test-backends";
import { useLocalEngine } from "./engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, useConsoleDb } from "./helpers";

// What the console's own actions write to the audit log, against the real engine: a sandbox's
// create, pause and terminate with its type and id, the credential, user agent and the request id
// the answer carried; a refused terminate (a viewer) with the refusal's code; and the connection's
// first successful use, recorded once.

describe("refusedAction", () => {
  it("names a refused mutation as its success would be named", () => {
    expect(refusedAction("DELETE", "/api/v1/sandboxes/sbx_1")).toEqual({
      action: "sandbox.terminate",
      targetType: "sandbox",
      targetId: "sbx_1",
    });
    expect(refusedAction("POST", "/api/v1/sandboxes/sbx_1/pause")).toMatchObject({ action: "sandbox.pause" });
    expect(refusedAction("POST", "/api/v1/sandboxes/sbx_1/snapshots")).toMatchObject({ action: "snapshot.create" });
    expect(refusedAction("POST", "/api/v1/volumes")).toEqual({
      action: "volume.create",
      targetType: "volume",
      targetId: null,
    });
    expect(refusedAction("DELETE", "/api/v1/templates/tpl_1")).toMatchObject({ action: "template.delete" });
    expect(refusedAction("DELETE", "/api/v1/webhooks/whk_1")).toMatchObject({
      action: "webhook.delete",
      targetType: "webhook",
    });
    expect(refusedAction("PATCH", "/api/audit/settings")).toMatchObject({ action: "audit.settings_update" });
    expect(refusedAction("DELETE", "/api/connections/conn_1")).toMatchObject({ action: "connection.delete" });
  });
});

describe.each(testBackends)("audited actions on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  it("records sandbox lifecycle rows, refusals and a connection's first use", async () => {
    const { user, teamId } = await makeUser(ctx.db(), "owner");
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const connected = await localEngine(request("/api/connections/local-engine", { method: "POST", cookie }), noParams);
    expect(connected.status).toBe(201);
    const connectionId = ((await jsonOf(connected)) as { connection: { id: string } }).connection.id;

    expect((await listSandboxes(request("/api/v1/sandboxes", { cookie }), noParams)).status).toBe(200);
    const created = await createSandbox(
      request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "python-3.12" } }),
      noParams,
    );
    expect(created.status).toBe(201);
    const id = ((await jsonOf(created)) as { id: string }).id;
    const p = { params: Promise.resolve({ id }) };
    expect((await pause(request(`/api/v1/sandboxes/${id}/pause`, { method: "POST", cookie }), p)).status).toBe(200);

    const { user: viewer } = await makeUser(ctx.db(), null);
    await addMember(ctx.db(), { teamId: teamId!, userId: viewer.id, role: "viewer" });
    const viewerCookie = (await sessionCookie(ctx.db(), viewer.id)).cookie;
    const refused = await terminate(request(`/api/v1/sandboxes/${id}`, { method: "DELETE", cookie: viewerCookie }), p);
    expect(refused.status).toBe(403);

    const done = await terminate(request(`/api/v1/sandboxes/${id}`, { method: "DELETE", cookie }), p);
    expect(done.status).toBeLessThan(300);

    const rows = (
      await queryAuditEvents(ctx.db(), { teamId: teamId!, filter: { targetType: "sandbox", targetId: id } })
    ).items;
    expect(rows.map((r) => [r.action, r.result])).toEqual([
      ["sandbox.terminate", "ok"],
      ["sandbox.terminate", "forbidden"],
      ["sandbox.pause", "ok"],
      ["sandbox.create", "ok"],
    ]);
    expect(rows[0]).toMatchObject({
      actorEmail: user.email.toLowerCase(),
      credential: "session",
      userAgent: "vitest",
      requestId: done.headers.get("x-request-id"),
      ip: "192.0.2.10",
    });
    expect(rows[1]).toMatchObject({
      actorEmail: viewer.email.toLowerCase(),
      requestId: refused.headers.get("x-request-id"),
    });
    expect(rows[3]!.requestId).toBe(created.headers.get("x-request-id"));

    const firstUse = (await queryAuditEvents(ctx.db(), { teamId: teamId!, filter: { action: "connection.first_use" } }))
      .items;
    expect(firstUse).toHaveLength(1);
    expect(firstUse[0]).toMatchObject({ targetType: "connection", targetId: connectionId, userId: user.id });
  });
});
