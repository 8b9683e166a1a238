import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../../src/store/tokens.js";
import { injectEngine, type Injected, type InjectEngine } from "../helpers/inject.js";

/**
 * Route logic in process (app.inject, no engine process): every resource's validation failures
 * are the contract's 422 with FastAPI's loc, unknown ids its 404 codes, auth its 401/403, and
 * lists page with X-Next-Cursor. The real-process suites keep isolation and streaming.
 */
let e: InjectEngine;
beforeAll(async () => {
  e = await injectEngine();
});
afterAll(async () => {
  await e?.close();
});

function expect422(r: Injected, loc: (string | number)[], what: string): void {
  expect(r.status, `${what}: ${r.text}`).toBe(422);
  expect(r.body.code, what).toBe("validation_error");
  expect(Array.isArray(r.body.detail), what).toBe(true);
  expect(
    r.body.detail.map((d: { loc: unknown[] }) => d.loc.join(".")),
    what,
  ).toContain(loc.join("."));
}

describe("validation is the contract's 422, naming the field, on every resource", () => {
  const cases: [string, string, unknown, (string | number)[]][] = [
    ["POST", "/v1/sandboxes", { template: "python-3.12", memory_mb: "big" }, ["body", "memory_mb"]],
    ["POST", "/v1/sandboxes", {}, ["body", "template"]],
    ["GET", "/v1/sandboxes?limit=0", undefined, ["query", "limit"]],
    ["GET", "/v1/sandboxes?status=running,nope", undefined, ["query", "status", 1]],
    ["GET", `/v1/sandboxes/${"a".repeat(65)}`, undefined, ["path", "id"]],
    ["PATCH", "/v1/sandboxes/sbx_x", { timeout_seconds: 1 }, ["body", "timeout_seconds"]],
    ["POST", "/v1/sandboxes/sbx_x/timeout", {}, ["body", "timeout_seconds"]],
    ["POST", "/v1/sandboxes/sbx_x/exec", { command: "a\u0000b" }, ["body", "command"]],
    ["POST", "/v1/sandboxes/sbx_x/exec/stream", { command: "" }, ["body", "command"]],
    ["GET", "/v1/sandboxes/sbx_x/files", undefined, ["query", "path"]],
    ["POST", "/v1/sandboxes/sbx_x/files", { path: "/w/a" }, ["body", "content"]],
    ["POST", "/v1/sandboxes/sbx_x/files/batch", { files: [] }, ["body", "files"]],
    [
      "POST",
      "/v1/sandboxes/sbx_x/files/presign-download",
      { path: "/a", expires_in_seconds: 0 },
      ["body", "expires_in_seconds"],
    ],
    ["GET", "/v1/sandboxes/sbx_x/files/raw", undefined, ["query", "path"]],
    ["GET", "/v1/sandboxes/sbx_x/metrics?since=yesterday", undefined, ["query", "since"]],
    ["GET", "/v1/sandboxes/sbx_x/events?cursor=abc", undefined, ["query", "cursor"]],
    ["GET", "/v1/sandboxes/sbx_x/previews/0", undefined, ["path", "port"]],
    ["POST", "/v1/sandboxes/sbx_x/pty", { cols: 0 }, ["body", "cols"]],
    ["POST", "/v1/sandboxes/sbx_x/pty/p/resize", { cols: 80 }, ["body", "rows"]],
    ["POST", "/v1/sandboxes/sbx_x/snapshots", { name: "snap_x" }, ["body", "name"]],
    ["GET", "/v1/snapshots?limit=101", undefined, ["query", "limit"]],
    ["POST", "/v1/volumes", { name: "v", max_lifetime_hours: 1, max_lifetime_days: 1 }, ["body", "max_lifetime_hours"]],
    ["GET", "/v1/volumes?status=lost", undefined, ["query", "status"]],
    ["POST", "/v1/volumes/vol_x/move", {}, ["body", "region"]],
    ["POST", "/v1/templates", { name: "-bad", base_image: "debian-12" }, ["body", "name"]],
    ["GET", "/v1/templates/tmpl_x/logs?limit=0", undefined, ["query", "limit"]],
    ["POST", "/v1/webhooks", { url: "https://example.com/h", event_types: ["nope"] }, ["body", "event_types", 0]],
    ["POST", "/v1/webhooks", { url: "http://127.0.0.1:9/h" }, ["body", "url"]],
    ["GET", "/v1/webhooks/wh_x/deliveries?status=lost", undefined, ["query", "status"]],
    ["GET", "/v1/usage?from=2025-02-30", undefined, ["query", "from"]],
  ];
  it.each(cases)("%s %s", async (method, url, body, loc) => {
    expect422(await e.call(method as "GET", url, body), loc, `${method} ${url}`);
  });

  it("bad JSON is 400 bad_request and an unknown content type 415, before any lookup", async () => {
    const bad = await e.call("POST", "/v1/sandboxes/sbx_x/exec", '{"command":');
    expect([bad.status, bad.body.code]).toEqual([400, "bad_request"]);
    const xml = await e.call("POST", "/v1/sandboxes/sbx_x/exec", "<x/>", {
      headers: { "content-type": "application/xml" },
    });
    expect([xml.status, xml.body.code]).toEqual([415, "unsupported_media_type"]);
  });
});

describe("unknown ids and routes", () => {
  it.each([
    ["GET", "/v1/sandboxes/sbx_nope", "sandbox_not_found"],
    ["GET", "/v1/snapshots/snap_nope", "snapshot_not_found"],
    ["GET", "/v1/volumes/vol_nope", "volume_not_found"],
    ["GET", "/v1/templates/tmpl_nope", "template_not_found"],
    ["GET", "/v1/webhooks/wh_nope", "webhook_not_found"],
    ["GET", "/v1/nothing-here", "not_found"],
  ])("%s %s is 404 %s", async (method, url, code) => {
    const r = await e.call(method as "GET", url);
    expect([r.status, r.body.code]).toEqual([404, code]);
  });

  it("templates are immutable: PATCH and PUT are 405 with Allow", async () => {
    const r = await e.call("PATCH", "/v1/templates/tmpl_nope", {});
    expect([r.status, r.body.code, r.headers.allow]).toEqual([405, "method_not_allowed", "GET, DELETE"]);
  });
});

describe("authentication", () => {
  it("no token is 401 with WWW-Authenticate, on every kind of route, before validation", async () => {
    for (const [method, url] of [
      ["GET", "/v1/sandboxes"],
      ["POST", "/v1/sandboxes"],
      ["GET", "/v1/openapi.json"],
      ["GET", `/v1/sandboxes/${"a".repeat(65)}`],
    ] as const) {
      const r = await e.call(method, url, method === "POST" ? { bad: true } : undefined, { token: null });
      expect([r.status, r.body.code], `${method} ${url}`).toEqual([401, "unauthorized"]);
      expect(r.headers["www-authenticate"]).toBe("Bearer");
    }
  });

  it("a read-only token reads but may not write (403 insufficient_scope)", async () => {
    const { token } = mintToken(e.engine.ctx.db, ["sandboxes:read"], {});
    expect((await e.call("GET", "/v1/webhooks", undefined, { token })).status).toBe(200);
    const w = await e.call("POST", "/v1/webhooks", { url: "https://example.com/h" }, { token });
    expect([w.status, w.body.code, w.body.required_scope]).toEqual([403, "insufficient_scope", "sandboxes:write"]);
  });

  it("admin routes want the bootstrap secret, not a token", async () => {
    const r = await e.call("GET", "/_admin/tokens");
    expect([r.status, r.body.code]).toEqual([401, "unauthorized"]);
    expect(r.body.detail).toMatch(/bootstrap/);
  });
});

describe("paging", () => {
  it("lists page newest first with X-Next-Cursor until the last page", async () => {
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await e.call("POST", "/v1/webhooks", { url: `https://example.com/h${i}` });
      expect(r.status).toBe(201);
      created.push(r.body.id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const r = await e.call("GET", `/v1/webhooks?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(r.status).toBe(200);
      expect(r.body.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.map((w: { id: string }) => w.id));
      cursor = r.headers["x-next-cursor"] as string | undefined;
      if (!cursor) break;
    }
    expect(seen).toEqual([...created].reverse());
  });

  it("limit bounds are checked on every list", async () => {
    for (const url of ["/v1/sandboxes", "/v1/snapshots", "/v1/volumes", "/v1/templates", "/v1/webhooks"]) {
      expect422(await e.call("GET", `${url}?limit=abc`), ["query", "limit"], url);
      expect((await e.call("GET", `${url}?limit=100`)).status, url).toBe(200);
    }
  });

  it("a repeated query key keeps its first value on every route; ?status may repeat on the sandbox list", async () => {
    for (const url of ["/v1/sandboxes", "/v1/snapshots", "/v1/volumes", "/v1/templates", "/v1/webhooks"]) {
      const r = await e.call("GET", `${url}?limit=1&limit=abc`);
      expect(r.status, url).toBe(200);
      expect(r.body.length, url).toBeLessThanOrEqual(1);
    }
    expect((await e.call("GET", "/v1/sandboxes?status=running&status=paused")).status).toBe(200);
    expect422(await e.call("GET", "/v1/sandboxes?status=running&status=nonsense"), ["query", "status", 1], "status");
  });
});
