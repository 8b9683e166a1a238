import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, target, type EngineHandle } from "./helpers/engine.js";
import { hostRequest, previewHostOf } from "./helpers/previews.js";

/**
 * Preview URLs in the v1 contract (GET /v1/sandboxes/:id/previews/:port, POST …/preview-token) over HTTP. Runs against the local engine, or any v1
 * server with ORKESTR_API_URL and ORKESTR_API_KEY set (on a plan with previews); the proxy checks
 * reach the local engine on 127.0.0.1 with a Host header and are skipped elsewhere.
 */
let e: EngineHandle;
const created: string[] = [];

beforeAll(async () => {
  e = await target();
});
afterAll(async () => {
  for (const id of created) await e.api("DELETE", `/sandboxes/${id}`).catch(() => undefined);
  await e?.stop();
});

async function sandbox(body: Record<string, unknown>): Promise<string> {
  const id = await createSandbox(e, body);
  created.push(id);
  return id;
}

describe("preview URLs", () => {
  let id: string;
  beforeAll(async () => {
    id = await sandbox({ network: "restricted" });
  });

  it("a networked sandbox carries preview_host_base, the port-less suffix of its preview hosts", async () => {
    const v = (await e.api("GET", `/sandboxes/${id}`)).body;
    expect(typeof v.preview_host_base).toBe("string");
    expect(v.preview_host_base.toLowerCase()).toContain(id.slice("sbx_".length).toLowerCase());
    const listed = (await e.api("GET", "/sandboxes")).body.find((s: { id: string }) => s.id === id);
    expect(listed.preview_host_base).toBe(v.preview_host_base);
  });

  it("GET /v1/sandboxes/{id}/previews/{port} returns {port, host, url, auth_required}", async () => {
    const r = await e.api("GET", `/sandboxes/${id}/previews/3000`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ port: 3000, auth_required: false });
    const base = (await e.api("GET", `/sandboxes/${id}`)).body.preview_host_base as string;
    expect(r.body.host).toBe(`3000-${base}`);
    expect(r.body.url).toMatch(new RegExp(`^https?://${r.body.host.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/?$`));
    if (e.local) expect(r.body.url).toBe(`http://${previewHostOf(e, id, 3000)}`);
  });

  it("rejects ports outside 1-65535 (422) and unknown sandboxes (404)", async () => {
    for (const port of ["0", "65536", "http"]) {
      const r = await e.api("GET", `/sandboxes/${id}/previews/${port}`);
      expect(r.status, port).toBe(422);
      expect(r.body.code).toBe("validation_error");
    }
    const r = await e.api("GET", "/sandboxes/sbx_00000000000000000000000000/previews/3000");
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("sandbox_not_found");
  });

  it("an off sandbox has no port to expose: no preview_host_base, 409 network_off", async () => {
    const off = await sandbox({ network: "off" });
    expect((await e.api("GET", `/sandboxes/${off}`)).body.preview_host_base).toBeNull();
    const r = await e.api("GET", `/sandboxes/${off}/previews/3000`);
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ code: "network_off" });
    expect(typeof r.body.detail).toBe("string");
  });

  it.runIf(!process.env.ORKESTR_API_URL)("the proxy answers 502 port_not_listening when nothing listens", async () => {
    const r = await hostRequest(e, previewHostOf(e, id, 3000), "/", { headers: { accept: "application/json" } });
    expect(r.status).toBe(502);
    expect(JSON.parse(r.body)).toMatchObject({ code: "port_not_listening" });
  });
});

describe("preview_auth", () => {
  it("returns preview_auth_token once at create; rotating returns a new one", async () => {
    const r = await e.api("POST", "/sandboxes", { template: "python-3.12", network: "restricted", preview_auth: true });
    expect(r.status).toBe(201);
    created.push(r.body.id);
    expect(r.body.preview_auth).toBe(true);
    expect(r.body.preview_auth_token).toMatch(/^pvt_/);
    const got = (await e.api("GET", `/sandboxes/${r.body.id}`)).body;
    expect(got.preview_auth_token ?? null).toBeNull();
    expect((await e.api("GET", `/sandboxes/${r.body.id}/previews/3000`)).body.auth_required).toBe(true);

    const rot = await e.api("POST", `/sandboxes/${r.body.id}/preview-token`);
    expect(rot.status).toBe(200);
    expect(rot.body.preview_auth_token).toMatch(/^pvt_/);
    expect(rot.body.preview_auth_token).not.toBe(r.body.preview_auth_token);

    if (e.local) {
      const h = previewHostOf(e, r.body.id, 3000);
      const denied = await hostRequest(e, h, "/", { headers: { accept: "application/json" } });
      expect(denied.status).toBe(401);
      expect(JSON.parse(denied.body).code).toBe("preview_auth_required");
      // With the current token it gets as far as the (empty) port.
      const through = await hostRequest(e, h, "/", {
        headers: { accept: "application/json", "x-orkestr-preview-token": rot.body.preview_auth_token },
      });
      expect(through.status).toBe(502);
      const stale = await hostRequest(e, h, "/", { headers: { "x-orkestr-preview-token": r.body.preview_auth_token } });
      expect(stale.status).toBe(401);
    }
  });

  it("rotating on a sandbox without preview_auth is 409 preview_auth_disabled", async () => {
    const id = await sandbox({ network: "restricted" });
    const r = await e.api("POST", `/sandboxes/${id}/preview-token`);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("preview_auth_disabled");
  });
});
