import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createSandbox, exec, startEngine, type ApiResponse, type EngineHandle } from "./helpers/engine.js";
import { createTemplate, waitBuilt } from "./helpers/templates.js";
import { until } from "./helpers/async.js";

/**
 * Accounts on the engine. Two accounts share one engine; account A owns one of every kind of
 * resource. The matrix below is generated from the engine's own route table (GET /_admin/routes):
 * for every route that names a resource, B asking with A's id must get exactly what B gets for an
 * id that never existed (404, same code) — and a route added later without an entry here fails.
 */

type Json = Record<string, unknown>;

/** A loopback webhook receiver that records the event types it was sent. */
async function receiver() {
  const types: string[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      try {
        types.push(String((JSON.parse(body) as { type?: unknown }).type));
      } catch {
        types.push("unparsable");
      }
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, types, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A never-existing id of the same shape: same prefix, another ULID. */
function ghost(id: string): string {
  const [prefix] = id.split("_");
  return `${prefix}_01ZZZZZZZZZZZZZZZZZZZZZZZZ`;
}

describe("accounts: one engine, two tenants", () => {
  let e: EngineHandle;
  let tokenA: string;
  let tokenB: string;
  let rxA: Awaited<ReturnType<typeof receiver>>;
  let rxB: Awaited<ReturnType<typeof receiver>>;
  /** A's resource of each kind, by the route parameter that names it. */
  const mine: Record<string, string> = {};
  /** B's own sandbox and webhook: parents for "B's parent, A's child" lookups. */
  const theirs: Record<string, string> = {};
  /** The engine handle acting with another token (helpers take a handle). */
  const as = (token: string): EngineHandle => ({
    ...e,
    token,
    api: (m, p, b, o) => call(e.url, o?.token === undefined ? token : o.token, m, p, b, o?.headers),
  });
  const asA = <T = Json>(method: string, p: string, body?: unknown) => call<T>(e.url, tokenA, method, p, body);
  const asB = <T = Json>(method: string, p: string, body?: unknown) => call<T>(e.url, tokenB, method, p, body);

  beforeAll(async () => {
    rxA = await receiver();
    rxB = await receiver();
    // The two loopback receivers are the only internal origins this engine may deliver to.
    e = await startEngine({
      env: { ORKESTR_ENGINE_WEBHOOK_ALLOW: [rxA.url, rxB.url].map((u) => new URL(u).origin).join(",") },
    });
    tokenA = await e.mint(["sandboxes:read", "sandboxes:write"], { account: "team-a" });
    tokenB = await e.mint(["sandboxes:read", "sandboxes:write"], { account: "team-b" });
    // Both subscribe to everything; B's receiver must only ever hear of B's own events.
    const whB = await asB<{ id: string }>("POST", "/webhooks", { url: rxB.url });
    expect(whB.status, whB.text).toBe(201);
    theirs.webhook = whB.body.id;
    const whA = await asA<{ id: string }>("POST", "/webhooks", { url: rxA.url });
    expect(whA.status, whA.text).toBe(201);
    mine.webhook = whA.body.id;

    const a = await asA<{ id: string }>("POST", "/sandboxes", {
      template: "python-3.12",
      network: "restricted",
      preview_auth: true,
      metadata: { owner: "a" },
    });
    expect(a.status, a.text).toBe(201);
    mine.sandbox = a.body.id;
    await exec(as(tokenA), mine.sandbox!, "echo a-secret > /workspace/a.txt");
    theirs.sandbox = await createSandbox(as(tokenB));
    const pty = await asA<{ id: string }>("POST", `/sandboxes/${mine.sandbox}/pty`, { command: "/bin/sh" });
    expect(pty.status, pty.text).toBe(201);
    mine.pty = pty.body.id;
    const snap = await asA<{ id: string }>("POST", `/sandboxes/${mine.sandbox}/snapshots`, { name: "shared-name" });
    expect(snap.status, snap.text).toBe(201);
    mine.snapshot = snap.body.id;
    const vol = await asA<{ id: string }>("POST", "/volumes", { name: "shared-name", size_gb: 1 });
    expect(vol.status, vol.text).toBe(201);
    mine.volume = vol.body.id;
    const tpl = await createTemplate(as(tokenA), { name: "shared-name", base_image: "python-3.12", steps: ["true"] });
    mine.template = tpl.id;
    await waitBuilt(as(tokenA), tpl.id);
    const test = await asA<{ delivery_id: string }>("POST", `/webhooks/${mine.webhook}/test`);
    expect(test.status, test.text).toBe(202);
    mine.delivery = test.body.delivery_id;
    await until("A's receiver to get the test delivery", async () =>
      rxA.types.includes("webhook.test") ? true : undefined,
    );
  }, 120_000);

  afterAll(async () => {
    await e?.stop();
    await rxA?.close();
    await rxB?.close();
  });

  /** Which resource a path parameter names, from the route's shape. */
  function resourceOf(url: string, param: string): string {
    if (param === "pid") return "pty";
    if (param === "dlv") return "delivery";
    if (param === "port") return "port";
    const family = url.split("/")[2]!;
    return (
      { sandboxes: "sandbox", snapshots: "snapshot", volumes: "volume", templates: "template", webhooks: "webhook" }[
        family
      ] ?? `unknown:${family}`
    );
  }

  /** A body that passes validation, so the request reaches the lookup instead of stopping at 422. */
  const BODIES: Record<string, unknown> = {
    "PATCH /v1/sandboxes/:id": { metadata: { x: "y" } },
    "POST /v1/sandboxes/:id/resume": {},
    "POST /v1/sandboxes/:id/timeout": { timeout_seconds: 60 },
    "POST /v1/sandboxes/:id/exec": { command: "true" },
    "POST /v1/sandboxes/:id/exec/stream": { command: "true" },
    "POST /v1/sandboxes/:id/files": { path: "/workspace/x", content: "eA==" },
    "POST /v1/sandboxes/:id/files/batch": { files: [{ path: "/workspace/x", content: "eA==" }] },
    "POST /v1/sandboxes/:id/files/presign-upload": { path: "/workspace/x" },
    "POST /v1/sandboxes/:id/files/presign-download": { path: "/workspace/a.txt" },
    "POST /v1/sandboxes/:id/snapshots": { name: "stolen" },
    "POST /v1/sandboxes/:id/pty": {},
    "POST /v1/sandboxes/:id/pty/:pid/resize": { cols: 100, rows: 30 },
    "POST /v1/sandboxes/:id/pty/:pid/signal": { signal: "SIGINT" },
    "PATCH /v1/volumes/:id": { name: "renamed" },
    "POST /v1/volumes/:id/move": { region: "nbg1" },
    "PATCH /v1/webhooks/:id": { description: "x" },
  };
  /** Query strings some routes need before they look anything up. */
  const QUERIES: Record<string, string> = {
    "/v1/sandboxes/:id/files": "?path=/workspace/a.txt",
    "/v1/sandboxes/:id/files/raw": "?path=/workspace/a.txt",
  };
  /** Routes whose answer for any id comes before the lookup, by design (the same for every id). */
  const NOT_404: Record<string, number> = {
    "PATCH /v1/templates/:id": 405,
    "PUT /v1/templates/:id": 405,
  };

  async function matrix(substitute: (url: string, param: string, role: "target" | "parent") => string) {
    const routes = (await (
      await fetch(`${e.origin}/_admin/routes`, { headers: { "x-baton-bootstrap": e.bootstrap! } })
    ).json()) as { method: string; url: string }[];
    const withIds = routes.filter((r) => r.url.startsWith("/v1/") && r.url.includes(":") && r.method !== "HEAD");
    expect(withIds.length).toBeGreaterThan(40);
    const rows: { route: string; stolen: ApiResponse<Json>; never: ApiResponse<Json> }[] = [];
    for (const r of withIds) {
      const params = [...r.url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
      const last = params[params.length - 1]!;
      const fill = (useGhost: boolean) =>
        r.url.replace(/:(\w+)/g, (_, p: string) => {
          const role = p === last || (last === "port" && p === "id") ? "target" : "parent";
          const id = substitute(r.url, p, role);
          return useGhost && role === "target" && resourceOf(r.url, p) !== "port" ? ghost(id) : id;
        });
      const key = `${r.method} ${r.url}`;
      const body = r.method === "GET" || r.method === "DELETE" ? undefined : (BODIES[key] ?? {});
      const q = QUERIES[r.url] ?? "";
      const stolen = await asB(r.method, fill(false).slice(3) + q, body);
      const never = await asB(r.method, fill(true).slice(3) + q, body);
      rows.push({ route: key, stolen, never });
    }
    return rows;
  }

  it("every route that names one of A's resources answers B exactly as for an id that never existed", async () => {
    const rows = await matrix((url, p) => (resourceOf(url, p) === "port" ? "8000" : mine[resourceOf(url, p)]!));
    const problems: string[] = [];
    for (const { route, stolen, never } of rows) {
      const want = NOT_404[route] ?? 404;
      const code = (x: ApiResponse<Json>) => (x.body as Json | null)?.code;
      if (stolen.status !== want) problems.push(`${route}: B got ${stolen.status} ${stolen.text.slice(0, 200)}`);
      if (stolen.status !== never.status || code(stolen) !== code(never)) {
        problems.push(
          `${route}: A's id ${stolen.status}/${String(code(stolen))} but an unknown id ${never.status}/${String(code(never))}`,
        );
      }
    }
    expect(problems).toEqual([]);
    // Nothing of A's changed: its sandbox still runs with its metadata, its file is intact.
    const s = await asA<{ status: string; metadata: Json }>("GET", `/sandboxes/${mine.sandbox}`);
    expect(s.body).toMatchObject({ status: "running", metadata: { owner: "a" } });
    expect((await exec(as(tokenA), mine.sandbox!, "cat /workspace/a.txt")).stdout).toBe("a-secret\n");
    expect((await asA<{ name: string }>("GET", `/volumes/${mine.volume}`)).body.name).toBe("shared-name");
  }, 120_000);

  it("B's own parent with A's child (a PTY session, a delivery) is just as unknown", async () => {
    const rows = await matrix((url, p, role) => {
      const kind = resourceOf(url, p);
      if (kind === "port") return "8000";
      if (role === "parent") return theirs[kind] ?? mine[kind]!;
      return mine[kind]!;
    });
    const nested = rows.filter((r) => r.route.includes(":pid") || r.route.includes(":dlv"));
    expect(nested.length).toBeGreaterThanOrEqual(7);
    for (const { route, stolen, never } of nested) {
      expect(stolen.status, `${route}: ${stolen.text}`).toBe(404);
      expect((stolen.body as Json).code, route).toBe((never.body as Json).code);
    }
  }, 60_000);

  it("lists, usage and limits show each account only its own", async () => {
    const everyIdOfA = Object.values(mine);
    for (const p of [
      "/sandboxes",
      "/sandboxes?status=running,paused,terminated,failed",
      "/snapshots",
      "/volumes",
      "/templates?include_builtin=true",
      "/webhooks",
      "/usage",
      "/sandboxes/limits",
      // The same document for every account: generated from the routes, it names no resource.
      "/openapi.json",
    ]) {
      const r = await asB("GET", p);
      expect(r.status, `${p}: ${r.text}`).toBe(200);
      for (const id of everyIdOfA) expect(r.text, `${p} leaks ${id}`).not.toContain(id);
    }
    const limitsB = (await asB<Json>("GET", "/sandboxes/limits")).body;
    expect(limitsB).toMatchObject({
      account: { name: "team-b" },
      named_snapshots: 0,
      volumes: 0,
      templates: 0,
      running: 1,
      ram_used_mb: 1024,
    });
    const limitsA = (await asA<Json>("GET", "/sandboxes/limits")).body;
    expect(limitsA).toMatchObject({
      account: { name: "team-a" },
      named_snapshots: 1,
      volumes: 1,
      templates: 1,
      running: 1,
    });
    // Names are unique per account: B may use the names A used.
    const snapB = await asB("POST", `/sandboxes/${theirs.sandbox}/snapshots`, { name: "shared-name" });
    expect(snapB.status, snapB.text).toBe(201);
    const volB = await asB("POST", "/volumes", { name: "shared-name", size_gb: 1 });
    expect(volB.status, volB.text).toBe(201);
    // A name resolves within the caller's account only.
    expect(((await asB<Json>("GET", "/volumes/shared-name")).body as { id: string }).id).not.toBe(mine.volume);
    expect((await asB("POST", "/sandboxes", { template: "python-3.12", snapshot: mine.snapshot })).status).toBe(404);
    expect((await asB("POST", "/sandboxes", { template: "shared-name" })).status).toBe(404);
    const usageB = await asB<{ by_sandbox: { id: string }[] }>("GET", `/usage?sandbox_id=${mine.sandbox}`);
    expect(usageB.status).toBe(404);
  }, 60_000);

  it("events: B follows nothing of A's, and B's webhook never hears of A's resources", async () => {
    expect((await asB("GET", `/sandboxes/${mine.sandbox}/events`)).status).toBe(404);
    expect((await asB("GET", `/sandboxes/${mine.sandbox}/events?follow=true`)).status).toBe(404);
    // A's activity since the start (create, snapshot, volume, template, test delivery) reached A's receiver...
    await until("A's receiver to hear A's own activity", async () =>
      ["sandbox.created", "snapshot.created", "volume.created", "template.build_finished"].every((t) =>
        rxA.types.includes(t),
      )
        ? true
        : undefined,
    );
    // ...and only B's own events reached B's.
    const bHeard = [...rxB.types];
    expect(bHeard).toContain("sandbox.created");
    const bOwn = await asB<{ request_body: string }[]>("GET", `/webhooks/${theirs.webhook}/deliveries?limit=100`);
    for (const d of bOwn.body) {
      const one = await asB<{ request_body: string }>(
        "GET",
        `/webhooks/${theirs.webhook}/deliveries/${(d as unknown as { id: string }).id}`,
      );
      for (const id of Object.values(mine)) expect(one.body.request_body).not.toContain(id);
    }
  }, 60_000);

  it("a presigned URL serves its own account's sandbox only", async () => {
    const r = await asA<{ url: string }>("POST", `/sandboxes/${mine.sandbox}/files/presign-download`, {
      path: "/workspace/a.txt",
    });
    expect(r.status, r.text).toBe(200);
    const ok = await fetch(r.body.url);
    expect(await ok.text()).toBe("a-secret\n");
    // The same signature on B's sandbox: refused like any forgery.
    const swapped = r.body.url.replace(mine.sandbox!, theirs.sandbox!);
    expect((await fetch(swapped)).status).toBe(403);
  });

  it("tokens expire and are revoked at once, with a 401 that says which", async () => {
    const short = await e.mint(["sandboxes:read"], { account: "team-a", expiresInSeconds: 1 });
    expect((await call(e.url, short, "GET", "/sandboxes")).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    const expired = await call<Json>(e.url, short, "GET", "/sandboxes");
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({ code: "unauthorized", reason: "expired" });

    const doomed = await e.mint(["sandboxes:read", "sandboxes:write"], {
      account: "team-a",
      label: "alice@example.test",
    });
    expect((await call(e.url, doomed, "GET", `/sandboxes/${mine.sandbox}`)).status).toBe(200);
    const admin = (method: string, p: string) =>
      fetch(`${e.origin}/_admin${p}`, { method, headers: { "x-baton-bootstrap": e.bootstrap! } });
    const list = (await (await admin("GET", "/tokens?account=team-a")).json()) as {
      id: string;
      label: string | null;
      revoked_at: string | null;
    }[];
    const row = list.find((t) => t.label === "alice@example.test")!;
    expect(row).toMatchObject({ revoked_at: null });
    expect(JSON.stringify(list)).not.toContain(doomed);
    expect((await admin("DELETE", `/tokens/${row.id}`)).status).toBe(204);
    const revoked = await call<Json>(e.url, doomed, "GET", `/sandboxes/${mine.sandbox}`);
    expect(revoked.status).toBe(401);
    expect(revoked.body).toMatchObject({ code: "unauthorized", reason: "revoked" });
    expect((await admin("DELETE", "/tokens/tok_01ZZZZZZZZZZZZZZZZZZZZZZZZ")).status).toBe(404);
    // The account's other tokens are untouched.
    expect((await asA("GET", "/sandboxes")).status).toBe(200);
  });

  it("account names are checked", async () => {
    const r = await fetch(`${e.origin}/_admin/tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-baton-bootstrap": e.bootstrap! },
      body: JSON.stringify({ account: "../Team A" }),
    });
    expect(r.status).toBe(422);
    const accounts = (await (
      await fetch(`${e.origin}/_admin/accounts`, { headers: { "x-baton-bootstrap": e.bootstrap! } })
    ).json()) as { name: string }[];
    expect(accounts.map((a) => a.name)).toEqual(expect.arrayContaining(["default", "team-a", "team-b"]));
  });
});
