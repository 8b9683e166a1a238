import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";
import { raw } from "./helpers/raw-http.js";

/**
 * Authentication is decided on the route Fastify matched, not on the raw request target: every
 * spelling of a /v1 route that still reaches it needs a token, and the presigned raw-file URL is
 * the one exemption. Odd targets go out as raw bytes (fetch would normalise them).
 */
let e: EngineHandle;
let port: number;
let id: string;
beforeAll(async () => {
  e = await startEngine();
  port = Number(new URL(e.origin).port);
  id = await createSandbox(e);
});
afterAll(async () => {
  await e?.stop();
});

const bearer = () => ({ Authorization: `Bearer ${e.token}` });
const json = { "Content-Type": "application/json" };

/**
 * Spellings of POST /v1/sandboxes/{id}/exec. Each writes its own marker file if a handler ever
 * runs it, so "no handler ran" is checked on the sandbox, not only on the status.
 */
function execTargets(sbx: string): string[] {
  const origin = `127.0.0.1:${port}`;
  return [
    `/%761/sandboxes/${sbx}/exec`,
    `/v%31/sandboxes/${sbx}/exec`,
    `/%76%31/sandboxes/${sbx}/exec`,
    `/v1/%73andboxes/${sbx}/exec`,
    `/v1/sandboxes/${sbx}/%65xec`,
    `/v1/sandboxes/${sbx}/ex%65c?x=1`,
    `/v1/sandboxes/${sbx}/exec/`,
    `//v1/sandboxes/${sbx}/exec`,
    `/v1//sandboxes/${sbx}/exec`,
    `/v1/./sandboxes/${sbx}/exec`,
    `/v1/x/../sandboxes/${sbx}/exec`,
    `/x/../v1/sandboxes/${sbx}/exec`,
    `/v1/sandboxes/${sbx}/exec;x=1`,
    `/v1;x=1/sandboxes/${sbx}/exec`,
    `/V1/sandboxes/${sbx}/exec`,
    `/v1/SANDBOXES/${sbx}/EXEC`,
    `/v1/sandboxes%2F${sbx}%2Fexec`,
    `/v1/sandboxes/${sbx}%2Fexec`,
    `/v1/sandboxes/${sbx}/exec#x`,
    `/v1/sandboxes/${sbx}/exec?sig=1`,
    `/v1/sandboxes/${sbx}/exec?x/files/raw?sig=1`,
    `/v1/sandboxes/${sbx}/exec%3Fx/files/raw?sig=1`,
    `http://${origin}/v1/sandboxes/${sbx}/exec`,
    `HTTP://${origin}/v1/sandboxes/${sbx}/exec`,
    `http://${origin}/%761/sandboxes/${sbx}/exec`,
    `http://${origin}//v1/sandboxes/${sbx}/exec`,
    `http://evil.test/v1/sandboxes/${sbx}/exec`,
  ];
}

/** Spellings of reads and deletes of the sandbox itself and of the list. */
function otherTargets(sbx: string): [string, string][] {
  const origin = `127.0.0.1:${port}`;
  const targets: [string, string][] = [];
  for (const method of ["GET", "HEAD", "DELETE"]) {
    targets.push(
      [method, `/v1/sandboxes/${sbx}?x/files/raw?sig=1`],
      [method, `/v1/sandboxes/${sbx}?/files/raw?sig=1&path=/x`],
      [method, `/%761/sandboxes/${sbx}`],
      [method, `/v%31/sandboxes/${sbx}?sig=1`],
      [method, `http://${origin}/v1/sandboxes/${sbx}`],
      [method, `http://${origin}/v1/sandboxes/${sbx}?x/files/raw?sig=1`],
    );
  }
  targets.push(
    ["GET", `/%761/sandboxes`],
    ["GET", `/v%31/sandboxes?sig=1`],
    ["GET", `http://${origin}/v1/sandboxes`],
    ["GET", `/v1/sandboxes?/files/raw?sig=1`],
    ["GET", `/v1/%6Cimits`],
    ["POST", `/%761/sandboxes`],
    ["POST", `/v1/%77ebhooks`],
    ["GET", `/%761/sandboxes/${sbx}/files?path=/etc/hostname&sig=1`],
    ["POST", `/%761/sandboxes/${sbx}/files/presign-download`],
    ["POST", `/%761/sandboxes/${sbx}/pty`],
    // The OpenAPI document is behind a token like the rest of /v1 (docs/openapi.json is its public copy).
    ["GET", `/v1/openapi.json`],
    ["GET", `/%761/openapi.json?sig=1`],
  );
  return targets;
}

/**
 * What an unauthenticated request may get: refused (401, or 421 for a target naming another
 * host), or no route at all. Never a handler's answer.
 */
function expectRefused(r: { status: number; json: { code?: string } | null }, what: string, method: string): void {
  if (method === "HEAD") {
    expect([401, 404, 421], what).toContain(r.status);
    return;
  }
  expect(r.status, what).toBeGreaterThanOrEqual(400);
  expect(r.status, what).toBeLessThan(500);
  expect(
    ["unauthorized", "not_found", "bad_request", "host_not_allowed"],
    `${what}: ${JSON.stringify(r.json)}`,
  ).toContain(r.json?.code);
}

describe("authentication on the routed path", () => {
  it("refuses every spelling of exec without a token, and runs none of them", async () => {
    const targets = execTargets(id);
    for (const [i, target] of targets.entries()) {
      const body = JSON.stringify({ command: `touch /workspace/marker-${i}` });
      const r = await raw(port, "POST", target, { headers: json, body });
      expectRefused(r, `POST ${target}`, "POST");
    }
    // A wrong token is no better.
    const bad = await raw(port, "POST", `/%761/sandboxes/${id}/exec`, {
      headers: { ...json, Authorization: "Bearer ork_nope" },
      body: '{"command":"touch /workspace/marker-bad"}',
    });
    expect(bad.status).toBe(401);
    expect((await exec(e, id, "ls /workspace")).stdout).not.toMatch(/marker/);
  });

  it("the percent-encoded and absolute-form spellings do reach the route (so the 401s above are auth, not a miss)", async () => {
    for (const target of [
      `/%761/sandboxes/${id}/exec`,
      `/v%31/sandboxes/${id}/%65xec`,
      `http://127.0.0.1:${port}/v1/sandboxes/${id}/exec`,
    ]) {
      const r = await raw(port, "POST", target, {
        headers: { ...json, ...bearer() },
        body: '{"command":"echo routed"}',
      });
      expect(r.status, target).toBe(200);
      expect(r.json.stdout, target).toBe("routed\n");
    }
  });

  it("refuses reads, deletes and creates in any spelling without a token; the sandbox survives", async () => {
    for (const [method, target] of otherTargets(id)) {
      const body = method === "POST" ? "{}" : undefined;
      const r = await raw(port, method, target, { headers: body ? json : {}, body });
      expectRefused(r, `${method} ${target}`, method);
    }
    const s = await e.api("GET", `/sandboxes/${id}`);
    expect(s.status).toBe(200);
    expect(s.body.status).toBe("running");
  });

  it("admin routes are guarded by their own hook in any spelling", async () => {
    for (const target of ["/_admin/%74okens", "/_%61dmin/tokens", `http://127.0.0.1:${port}/_admin/tokens`]) {
      const r = await raw(port, "POST", target, { headers: json, body: "{}" });
      expect(r.status, target).toBe(401);
      expect(r.json.code, target).toBe("unauthorized");
      expect(r.json.detail, target).toMatch(/bootstrap/);
    }
  });

  it("keeps the presigned raw-file URL working, and only for a signed request without Authorization", async () => {
    await exec(e, id, "printf signed > /workspace/p.txt");
    const ps = await e.api("POST", `/sandboxes/${id}/files/presign-download`, { path: "/workspace/p.txt" });
    expect(ps.status).toBe(200);
    const url = new URL(ps.body.url as string);
    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("signed");
    // The same route spelled another way is the same route: the handler still checks the signature.
    const encoded = await raw(port, "GET", `/%761/sandboxes/${id}/files/raw${url.search}`);
    expect(encoded.status).toBe(200);
    expect(encoded.text).toBe("signed");
    const forged = await raw(
      port,
      "GET",
      `/%761/sandboxes/${id}/files/raw?path=/workspace/p.txt&exp=9999999999&sig=00`,
    );
    expect(forged.status).toBe(403);
    expect(forged.json.code).toBe("invalid_signature");
    // With an Authorization header the token is what counts, not the signature.
    const withBadToken = await fetch(url, { headers: { Authorization: "Bearer ork_nope" } });
    expect(withBadToken.status).toBe(401);
    // No signature, no token: 401.
    expect((await raw(port, "GET", `/v1/sandboxes/${id}/files/raw?path=/workspace/p.txt`)).status).toBe(401);
    // Another route with a `sig` is not presigned.
    expect((await raw(port, "GET", `/v1/sandboxes/${id}/files?path=/workspace/p.txt&sig=1`)).status).toBe(401);
  });

  it("matches fault rules on the routed path", async () => {
    const add = await fetch(`${e.origin}/_admin/faults`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-baton-bootstrap": e.bootstrap! },
      body: JSON.stringify({ kind: "error", path: "^/v1/limits$", method: "GET", status: 502, count: 1 }),
    });
    expect(add.status).toBe(201);
    const r = await raw(port, "GET", "/%761/%6Cimits", { headers: bearer() });
    expect(r.status).toBe(502);
    expect(r.json.code).toBe("fault_injected");
    expect((await e.api("GET", "/limits")).status).toBe(200);
  });
});
