import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEngine, type EngineHandle } from "./helpers/engine.js";

/** Faults on demand through the loopback admin switch (engine-only). */
let e: EngineHandle;
beforeAll(async () => {
  e = await startEngine();
});
afterAll(async () => {
  await e?.stop();
});

async function admin(method: string, p: string, body?: unknown, secret = e.bootstrap!) {
  const r = await fetch(`${e.origin}/_admin${p}`, {
    method,
    headers: { "x-baton-bootstrap": secret, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

describe("faults", () => {
  it("admin routes need the bootstrap secret", async () => {
    expect((await admin("GET", "/faults", undefined, "wrong")).status).toBe(401);
    expect((await admin("GET", "/faults")).status).toBe(200);
    const bad = await admin("POST", "/faults", { kind: "explode" });
    expect(bad.status).toBe(422);
    const badRe = await admin("POST", "/faults", { kind: "error", path: "(" });
    expect(badRe.status).toBe(422);
  });

  it("injects 503 fleet_full with Retry-After on a chosen route, for a chosen count", async () => {
    expect(
      (
        await admin("POST", "/faults", {
          kind: "fleet_full",
          path: "^/v1/sandboxes$",
          method: "POST",
          retry_after_seconds: 7,
          count: 2,
        })
      ).status,
    ).toBe(201);
    for (let i = 0; i < 2; i++) {
      const r = await e.api("POST", "/sandboxes", { template: "python-3.12" });
      expect(r.status).toBe(503);
      expect(r.body.code).toBe("fleet_full");
      expect(r.headers.get("retry-after")).toBe("7");
    }
    // Other routes are untouched, and the third create goes through.
    expect((await e.api("GET", "/sandboxes")).status).toBe(200);
    const ok = await e.api("POST", "/sandboxes", { template: "python-3.12" });
    expect(ok.status).toBe(201);
    await e.api("DELETE", `/sandboxes/${ok.body.id}`);
  });

  it("injects 5xx errors, latency and connection resets", async () => {
    const err = await admin("POST", "/faults", { kind: "error", path: "^/v1/limits$", status: 502 });
    expect((await e.api("GET", "/limits")).status).toBe(502);
    expect((await admin("GET", "/faults")).body.some((f: { id: string }) => f.id === err.body.id)).toBe(true);
    await admin("DELETE", `/faults/${err.body.id}`);
    expect((await e.api("GET", "/limits")).status).toBe(200);

    await admin("POST", "/faults", { kind: "latency", path: "^/v1/base-images$", latency_ms: 400, count: 1 });
    const t0 = performance.now();
    expect((await e.api("GET", "/base-images")).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(380);

    await admin("POST", "/faults", { kind: "reset", path: "^/v1/sandboxes$", method: "GET", count: 1 });
    await expect(e.api("GET", "/sandboxes")).rejects.toThrow();
    expect((await e.api("GET", "/sandboxes")).status).toBe(200);
    await admin("DELETE", "/faults");
    expect((await admin("GET", "/faults")).body).toEqual([]);
  });

  it("mints tokens over the loopback route", async () => {
    const r = await fetch(`${e.origin}/_admin/tokens`, {
      method: "POST",
      headers: { "x-baton-bootstrap": e.bootstrap!, "content-type": "application/json" },
      body: JSON.stringify({ scopes: ["sandboxes:read"] }),
    });
    expect(r.status).toBe(201);
    const { token } = (await r.json()) as { token: string };
    expect(token).toMatch(/^ork_/);
    expect((await e.api("GET", "/sandboxes", undefined, { token })).status).toBe(200);
  });
});
