import { describe, expect, it } from "vitest";
import { decodeBase64, encodeBase64 } from "./base64";
import { createOrkestrClient, type OrkestrClient } from "./core";
import { OrkestrError, OrkestrParseError } from "./errors";
import type { SandboxEvent } from "./schemas/events";
import * as ex from "./testing/contract-examples";
import { apiError, chunked, fakeFetch, json, recordingSleep, streamResponse, type Reply } from "./testing/fake-fetch";

function client(script: Reply | Reply[], baseUrl = "https://api.orkestr.eu") {
  const fetch = fakeFetch(script);
  const { sleep, waits } = recordingSleep();
  return { c: createOrkestrClient({ baseUrl, token: "ork_test", fetch, sleep, random: () => 0 }), fetch, waits };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const empty = () => new Response(null, { status: 204 });
const ok = { id: "x" };

/** Every resource method: what it sends and that it parses the answer. */
const ROUTES: {
  name: string;
  call: (c: OrkestrClient) => Promise<unknown>;
  reply: () => Response;
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}[] = [
  {
    name: "sandboxes.create",
    call: (c) => c.sandboxes.create({ template: "python-3.12" }),
    reply: () => json(ex.SANDBOX, { status: 201 }),
    method: "POST",
    path: "/sandboxes",
    body: { template: "python-3.12" },
  },
  {
    name: "sandboxes.get",
    call: (c) => c.sandboxes.get("sbx_1"),
    reply: () => json(ex.SANDBOX),
    method: "GET",
    path: "/sandboxes/sbx_1",
  },
  {
    name: "sandboxes.list",
    call: (c) => c.sandboxes.list({ limit: 5 }),
    reply: () => json([ex.SANDBOX]),
    method: "GET",
    path: "/sandboxes",
    query: { limit: "5" },
  },
  {
    name: "sandboxes.list (forks of a snapshot)",
    call: (c) => c.sandboxes.list({ snapshot: "snap_1", status: ["running", "terminated"] }),
    reply: () => json([ex.SANDBOX]),
    method: "GET",
    path: "/sandboxes",
    query: { snapshot: "snap_1", status: "running,terminated" },
  },
  {
    name: "sandboxes.update",
    call: (c) => c.sandboxes.update("sbx_1", { metadata: { a: "b" } }),
    reply: () => json(ex.SANDBOX),
    method: "PATCH",
    path: "/sandboxes/sbx_1",
    body: { metadata: { a: "b" } },
  },
  {
    name: "sandboxes.patch",
    call: (c) => c.sandboxes.patch("sbx_1", { auto_resume: true }),
    reply: () => json(ex.SANDBOX),
    method: "PATCH",
    path: "/sandboxes/sbx_1",
    body: { auto_resume: true },
  },
  {
    name: "sandboxes.terminate",
    call: (c) => c.sandboxes.terminate("sbx_1"),
    reply: empty,
    method: "DELETE",
    path: "/sandboxes/sbx_1",
  },
  {
    name: "sandboxes.pause",
    call: (c) => c.sandboxes.pause("sbx_1"),
    reply: () => json({ ...ex.SANDBOX, status: "paused" }),
    method: "POST",
    path: "/sandboxes/sbx_1/pause",
  },
  {
    name: "sandboxes.resume",
    call: (c) => c.sandboxes.resume("sbx_1"),
    reply: () => json(ex.SANDBOX, { status: 201 }),
    method: "POST",
    path: "/sandboxes/sbx_1/resume",
    body: {},
  },
  {
    name: "sandboxes.setTimeout",
    call: (c) => c.sandboxes.setTimeout("sbx_1", 900),
    reply: () => json(ex.SET_TIMEOUT),
    method: "POST",
    path: "/sandboxes/sbx_1/timeout",
    body: { timeout_seconds: 900 },
  },
  {
    name: "sandboxes.limits",
    call: (c) => c.sandboxes.limits(),
    reply: () => json(ex.LIMITS),
    method: "GET",
    path: "/sandboxes/limits",
  },
  {
    name: "sandboxes.usage",
    call: (c) => c.sandboxes.usage({ from: "2025-06-01", to: "2025-06-30", granularity: "day" }),
    reply: () => json(ex.USAGE),
    method: "GET",
    path: "/sandboxes/usage",
    query: { from: "2025-06-01", to: "2025-06-30", granularity: "day" },
  },
  {
    name: "sandboxes.metrics",
    call: (c) => c.sandboxes.metrics("sbx_1", new Date("2025-06-01T12:00:00Z")),
    reply: () => json(ex.METRICS),
    method: "GET",
    path: "/sandboxes/sbx_1/metrics",
    query: { since: "2025-06-01T12:00:00.000Z" },
  },
  {
    name: "sandboxes.events",
    call: (c) => c.sandboxes.events("sbx_1", { type: ["exec", "file.write"], limit: 10 }),
    reply: () => json(ex.EVENTS),
    method: "GET",
    path: "/sandboxes/sbx_1/events",
    query: { type: "exec,file.write", limit: "10" },
  },
  {
    name: "exec.run",
    call: (c) => c.exec.run("sbx_1", { command: "ls", cwd: "/tmp" }),
    reply: () => json(ex.EXEC_RESULT),
    method: "POST",
    path: "/sandboxes/sbx_1/exec",
    body: { command: "ls", cwd: "/tmp" },
  },
  {
    name: "files.list",
    call: (c) => c.files.list("sbx_1", "/workspace"),
    reply: () => json(ex.DIR_READ),
    method: "GET",
    path: "/sandboxes/sbx_1/files",
    query: { path: "/workspace" },
  },
  {
    name: "files.delete",
    call: (c) => c.files.delete("sbx_1", "/workspace/d", { recursive: true }),
    reply: empty,
    method: "DELETE",
    path: "/sandboxes/sbx_1/files",
    query: { path: "/workspace/d", recursive: "true" },
  },
  {
    name: "files.presignUpload",
    call: (c) => c.files.presignUpload("sbx_1", "/workspace/big.tar", { expiresInSeconds: 300, maxBytes: 1024 }),
    reply: () => json(ex.PRESIGN_UPLOAD),
    method: "POST",
    path: "/sandboxes/sbx_1/files/presign-upload",
    body: { path: "/workspace/big.tar", expires_in_seconds: 300, max_bytes: 1024 },
  },
  {
    name: "files.presignDownload",
    call: (c) => c.files.presignDownload("sbx_1", "/workspace/out.pdf"),
    reply: () => json({ ...ex.PRESIGN_UPLOAD, method: "GET" }),
    method: "POST",
    path: "/sandboxes/sbx_1/files/presign-download",
    body: { path: "/workspace/out.pdf" },
  },
  {
    name: "files.writeRaw",
    call: (c) => c.files.writeRaw("sbx_1", "/workspace/b.bin", Uint8Array.of(1, 2)),
    reply: () => json({ path: "/workspace/b.bin", size: 2 }, { status: 201 }),
    method: "PUT",
    path: "/sandboxes/sbx_1/files/raw",
    query: { path: "/workspace/b.bin" },
  },
  {
    name: "snapshots.create",
    call: (c) => c.snapshots.create("sbx_1", { name: "after-setup" }),
    reply: () => json(ex.SNAPSHOT, { status: 201 }),
    method: "POST",
    path: "/sandboxes/sbx_1/snapshots",
    body: { name: "after-setup" },
  },
  {
    name: "snapshots.list",
    call: (c) => c.snapshots.list({ sandbox_id: "sbx_1" }),
    reply: () => json({ snapshots: [ex.SNAPSHOT] }),
    method: "GET",
    path: "/snapshots",
    query: { sandbox_id: "sbx_1" },
  },
  {
    name: "snapshots.get",
    call: (c) => c.snapshots.get("after-setup"),
    reply: () => json(ex.SNAPSHOT),
    method: "GET",
    path: "/snapshots/after-setup",
  },
  {
    name: "snapshots.delete",
    call: (c) => c.snapshots.delete("snap_1"),
    reply: empty,
    method: "DELETE",
    path: "/snapshots/snap_1",
  },
  {
    name: "volumes.create",
    call: (c) => c.volumes.create({ name: "datasets", size_gb: 10, region: "fsn1", max_lifetime_days: 30 }),
    reply: () => json(ex.VOLUME, { status: 201 }),
    method: "POST",
    path: "/volumes",
    body: { name: "datasets", size_gb: 10, region: "fsn1", max_lifetime_days: 30 },
  },
  {
    name: "volumes.list",
    call: (c) => c.volumes.list({ region: "fsn1" }),
    reply: () => json([ex.VOLUME]),
    method: "GET",
    path: "/volumes",
    query: { region: "fsn1" },
  },
  {
    name: "volumes.get",
    call: (c) => c.volumes.get("vol_1"),
    reply: () => json(ex.VOLUME),
    method: "GET",
    path: "/volumes/vol_1",
  },
  {
    name: "volumes.update",
    call: (c) => c.volumes.update("vol_1", { size_gb: 20 }),
    reply: () => json(ex.VOLUME),
    method: "PATCH",
    path: "/volumes/vol_1",
    body: { size_gb: 20 },
  },
  {
    name: "volumes.move",
    call: (c) => c.volumes.move("vol_1", "hel1"),
    reply: () => json({ ...ex.VOLUME, status: "moving" }, { status: 202 }),
    method: "POST",
    path: "/volumes/vol_1/move",
    body: { region: "hel1" },
  },
  {
    name: "volumes.delete",
    call: (c) => c.volumes.delete("vol_1"),
    reply: empty,
    method: "DELETE",
    path: "/volumes/vol_1",
  },
  {
    name: "templates.create",
    call: (c) => c.templates.create({ name: "ml-py", base_image: "python-3.12", steps: ["pip install numpy"] }),
    reply: () => json(ex.TEMPLATE, { status: 202 }),
    method: "POST",
    path: "/templates",
    body: { name: "ml-py", base_image: "python-3.12", steps: ["pip install numpy"] },
  },
  {
    name: "templates.list",
    call: (c) => c.templates.list({ include_builtin: true }),
    reply: () => json([ex.TEMPLATE, { id: "python-3.12", builtin: true, status: "ready" }]),
    method: "GET",
    path: "/templates",
    query: { include_builtin: "true" },
  },
  {
    name: "templates.get",
    call: (c) => c.templates.get("tmpl_1"),
    reply: () => json(ex.TEMPLATE),
    method: "GET",
    path: "/templates/tmpl_1",
  },
  {
    name: "templates.delete",
    call: (c) => c.templates.delete("tmpl_1"),
    reply: empty,
    method: "DELETE",
    path: "/templates/tmpl_1",
  },
  {
    name: "templates.logs",
    call: (c) => c.templates.logs("tmpl_1", { cursor: 2, limit: 500 }),
    reply: () => json(ex.TEMPLATE_LOGS),
    method: "GET",
    path: "/templates/tmpl_1/logs",
    query: { cursor: "2", limit: "500" },
  },
  {
    name: "baseImages.list",
    call: (c) => c.baseImages.list(),
    reply: () => json(ex.BASE_IMAGES),
    method: "GET",
    path: "/base-images",
  },
  {
    name: "webhooks.create",
    call: (c) => c.webhooks.create({ url: "https://example.com/hooks/orkestr", event_types: ["sandbox.created"] }),
    reply: () => json(ex.WEBHOOK_CREATED, { status: 201 }),
    method: "POST",
    path: "/webhooks",
    body: { url: "https://example.com/hooks/orkestr", event_types: ["sandbox.created"] },
  },
  {
    name: "webhooks.list",
    call: (c) => c.webhooks.list(),
    reply: () => json([ex.WEBHOOK_CREATED]),
    method: "GET",
    path: "/webhooks",
  },
  {
    name: "webhooks.get",
    call: (c) => c.webhooks.get("wh_1"),
    reply: () => json(ex.WEBHOOK_CREATED),
    method: "GET",
    path: "/webhooks/wh_1",
  },
  {
    name: "webhooks.update",
    call: (c) => c.webhooks.update("wh_1", { enabled: false }),
    reply: () => json(ex.WEBHOOK_CREATED),
    method: "PATCH",
    path: "/webhooks/wh_1",
    body: { enabled: false },
  },
  {
    name: "webhooks.delete",
    call: (c) => c.webhooks.delete("wh_1"),
    reply: empty,
    method: "DELETE",
    path: "/webhooks/wh_1",
  },
  {
    name: "webhooks.enable",
    call: (c) => c.webhooks.enable("wh_1"),
    reply: () => json(ex.WEBHOOK_CREATED),
    method: "POST",
    path: "/webhooks/wh_1/enable",
  },
  {
    name: "webhooks.disable",
    call: (c) => c.webhooks.disable("wh_1"),
    reply: () => json({ ...ex.WEBHOOK_CREATED, enabled: false }),
    method: "POST",
    path: "/webhooks/wh_1/disable",
  },
  {
    name: "webhooks.rotateSecret",
    call: (c) => c.webhooks.rotateSecret("wh_1"),
    reply: () => json({ secret: "whsec_new" }),
    method: "POST",
    path: "/webhooks/wh_1/rotate-secret",
  },
  {
    name: "webhooks.test",
    call: (c) => c.webhooks.test("wh_1"),
    reply: () => json({ delivery_id: "dlv_9" }, { status: 202 }),
    method: "POST",
    path: "/webhooks/wh_1/test",
  },
  {
    name: "webhooks.deliveries",
    call: (c) => c.webhooks.deliveries("wh_1", { status: "failed" }),
    reply: () => json([ex.DELIVERY]),
    method: "GET",
    path: "/webhooks/wh_1/deliveries",
    query: { status: "failed" },
  },
  {
    name: "webhooks.delivery",
    call: (c) => c.webhooks.delivery("wh_1", "dlv_1"),
    reply: () => json({ ...ex.DELIVERY, request_body: {}, response_body_excerpt: "oops" }),
    method: "GET",
    path: "/webhooks/wh_1/deliveries/dlv_1",
  },
  {
    name: "webhooks.redeliver",
    call: (c) => c.webhooks.redeliver("wh_1", "dlv_1"),
    reply: () => new Response(null, { status: 202 }),
    method: "POST",
    path: "/webhooks/wh_1/deliveries/dlv_1/redeliver",
  },
  {
    name: "previews.get",
    call: (c) => c.previews.get("sbx_1", 3000),
    reply: () =>
      json({
        port: 3000,
        host: "3000-sbx_1.sbx.orkestr.run",
        url: "https://3000-sbx_1.sbx.orkestr.run",
        auth_required: true,
      }),
    method: "GET",
    path: "/sandboxes/sbx_1/previews/3000",
  },
  {
    name: "previews.rotateToken",
    call: (c) => c.previews.rotateToken("sbx_1"),
    reply: () => json({ preview_auth_token: "pvt_1" }),
    method: "POST",
    path: "/sandboxes/sbx_1/preview-token",
  },
  {
    name: "pty.open",
    call: (c) => c.pty.open("sbx_1", { cols: 100, rows: 30 }),
    reply: () => json({ id: "pty_1", status: "running" }, { status: 201 }),
    method: "POST",
    path: "/sandboxes/sbx_1/pty",
    body: { cols: 100, rows: 30 },
  },
  {
    name: "pty.list",
    call: (c) => c.pty.list("sbx_1"),
    reply: () => json([{ id: "pty_1", status: "exited", exit_code: 0 }]),
    method: "GET",
    path: "/sandboxes/sbx_1/pty",
  },
  {
    name: "pty.get",
    call: (c) => c.pty.get("sbx_1", "pty_1"),
    reply: () => json({ id: "pty_1", status: "running" }),
    method: "GET",
    path: "/sandboxes/sbx_1/pty/pty_1",
  },
  {
    name: "pty.resize",
    call: (c) => c.pty.resize("sbx_1", "pty_1", { cols: 120, rows: 40 }),
    reply: () => json({ id: "pty_1", status: "running", cols: 120, rows: 40 }),
    method: "POST",
    path: "/sandboxes/sbx_1/pty/pty_1/resize",
    body: { cols: 120, rows: 40 },
  },
  {
    name: "pty.signal",
    call: (c) => c.pty.signal("sbx_1", "pty_1", "SIGINT"),
    reply: () => json({ id: "pty_1", signal: "SIGINT", delivered: true }),
    method: "POST",
    path: "/sandboxes/sbx_1/pty/pty_1/signal",
    body: { signal: "SIGINT" },
  },
  {
    name: "pty.close",
    call: (c) => c.pty.close("sbx_1", "pty_1"),
    reply: empty,
    method: "DELETE",
    path: "/sandboxes/sbx_1/pty/pty_1",
  },
];

describe("every resource method", () => {
  it.each(ROUTES)("$name → $method $path", async ({ call, reply, method, path, query, body }) => {
    const { c, fetch } = client(reply);
    await call(c);
    expect(fetch.calls).toHaveLength(1);
    const r = fetch.calls[0]!;
    expect(r.method).toBe(method);
    expect(r.path).toBe(path);
    expect(Object.fromEntries(r.query)).toEqual(query ?? {});
    if (body !== undefined) expect(r.body).toEqual(body);
    expect(r.headers.get("authorization")).toBe("Bearer ork_test");
  });

  it("ids are encoded into the path", async () => {
    const { c, fetch } = client(() => json(ok));
    await c.snapshots.get("my snap/1").catch(() => undefined);
    expect(fetch.calls[0]!.url).toBe("https://api.orkestr.eu/v1/snapshots/my%20snap%2F1");
  });

  it("501 routes surface as not_implemented without retries", async () => {
    const { c, fetch } = client(() =>
      apiError(501, "not_implemented", "Snapshots are not implemented by the local engine yet"),
    );
    await expect(c.snapshots.list()).rejects.toMatchObject({ code: "not_implemented", status: 501 });
    expect(fetch.calls).toHaveLength(1);
  });
});

describe("sandboxes extras", () => {
  it("limits falls back to /v1/limits when /v1/sandboxes/limits is missing", async () => {
    const { c, fetch } = client([apiError(404, "sandbox_not_found", "Sandbox limits not found"), json(ex.LIMITS)]);
    const l = await c.sandboxes.limits();
    expect(l.regions).toEqual(["fsn1", "hel1", "rbx"]);
    expect(fetch.calls.map((r) => r.path)).toEqual(["/sandboxes/limits", "/limits"]);
  });

  it("limits does not fall back on other errors", async () => {
    const { c, fetch } = client(() => apiError(401, "unauthorized", "Not authenticated"));
    await expect(c.sandboxes.limits()).rejects.toMatchObject({ code: "unauthorized" });
    expect(fetch.calls).toHaveLength(1);
  });

  it("usage falls back to /v1/usage", async () => {
    const { c, fetch } = client([apiError(404, undefined, "Not Found"), json(ex.USAGE)]);
    expect((await c.sandboxes.usage()).totals?.cost_eur).toBe(4.87);
    expect(fetch.calls.map((r) => r.path)).toEqual(["/sandboxes/usage", "/usage"]);
  });

  it("metrics since accepts unix seconds and strings", async () => {
    const { c, fetch } = client(() => json(ex.METRICS));
    await c.sandboxes.metrics("sbx_1", 1717243200);
    await c.sandboxes.metrics("sbx_1", "2025-06-01T12:00:00Z");
    await c.sandboxes.metrics("sbx_1");
    expect(fetch.calls.map((r) => r.query.get("since"))).toEqual(["1717243200", "2025-06-01T12:00:00Z", null]);
  });

  it("allEvents pages through the timeline", async () => {
    const { c } = client([
      json(ex.EVENTS.slice(0, 2), { headers: { "X-Next-Cursor": "2" } }),
      json(ex.EVENTS.slice(2)),
    ]);
    expect((await collect(c.sandboxes.allEvents("sbx_1"))).map((e) => e.id)).toEqual(["evt_1", "evt_2", "evt_3"]);
  });

  it("followEvents streams SSE events and reconnects from the last id after a drop", async () => {
    const broken = () => {
      let n = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(ctl) {
          if (n++ === 0)
            ctl.enqueue(new TextEncoder().encode(`id: 1\ndata: ${JSON.stringify(ex.EVENTS[0])}\n\n: keepalive\n\n`));
          else ctl.error(new Error("socket hang up"));
        },
      });
      return new Response(body, { headers: { "Content-Type": "text/event-stream" } });
    };
    const rest = () =>
      streamResponse([
        `id: 2\ndata: ${JSON.stringify(ex.EVENTS[1])}\n\n`,
        `id: 3\ndata: ${JSON.stringify(ex.EVENTS[2])}\n\n`,
      ]);
    const { c, fetch, waits } = client([broken, rest]);
    const seen: SandboxEvent[] = await collect(c.sandboxes.followEvents("sbx_1", { type: "exec" }));
    expect(seen.map((e) => e.id)).toEqual(["evt_1", "evt_2", "evt_3"]);
    expect(
      fetch.calls.map((r) => [
        r.query.get("follow"),
        r.query.get("cursor"),
        r.headers.get("last-event-id"),
        r.query.get("type"),
      ]),
    ).toEqual([
      ["true", null, null, "exec"],
      ["true", "1", "1", "exec"],
    ]);
    expect(fetch.calls[0]!.headers.get("accept")).toBe("text/event-stream");
    expect(waits).toEqual([500]);
  });

  it("followEvents gives up after maxReconnects and rejects malformed events", async () => {
    const broken = () =>
      new Response(new ReadableStream({ pull: (ctl) => ctl.error(new Error("reset")) }), {
        headers: { "Content-Type": "text/event-stream" },
      });
    const { c, fetch } = client(broken);
    await expect(collect(c.sandboxes.followEvents("sbx_1", {}, { maxReconnects: 1 }))).rejects.toMatchObject({
      code: "connection_error",
    });
    expect(fetch.calls).toHaveLength(2);
    const bad = client(() => streamResponse(['data: {"id":"evt_1"}\n\n']));
    await expect(collect(bad.c.sandboxes.followEvents("sbx_1"))).rejects.toBeInstanceOf(OrkestrParseError);
  });
});

describe("files", () => {
  it("write sends text and bytes as base64", async () => {
    const { c, fetch } = client(() => json({ path: "/workspace/a", size: 3 }, { status: 201 }));
    await c.files.write("sbx_1", "/workspace/a.txt", "héllo");
    await c.files.write("sbx_1", "/workspace/b.bin", Uint8Array.of(0, 255, 7), { mode: "0755" });
    expect(fetch.calls[0]!.body).toEqual({
      path: "/workspace/a.txt",
      content: encodeBase64("héllo"),
      encoding: "base64",
    });
    expect(fetch.calls[1]!.body).toEqual({
      path: "/workspace/b.bin",
      content: "AP8H",
      encoding: "base64",
      mode: "0755",
    });
    expect(new TextDecoder().decode(decodeBase64((fetch.calls[0]!.body as { content: string }).content))).toBe("héllo");
  });

  it("writeBatch takes a map or rows and returns per-file results", async () => {
    const { c, fetch } = client(() =>
      json({
        written: [{ path: "/workspace/src/app.py", size: 11 }],
        errors: [{ path: "rel", detail: "path must be absolute", code: "invalid_path" }],
      }),
    );
    const r = await c.files.writeBatch("sbx_1", { "/workspace/src/app.py": "print('hi')", rel: "x" });
    expect(r.written).toHaveLength(1);
    expect(r.errors[0]!.code).toBe("invalid_path");
    expect(fetch.calls[0]!.body).toEqual({
      files: [
        { path: "/workspace/src/app.py", content: encodeBase64("print('hi')"), encoding: "base64" },
        { path: "rel", content: encodeBase64("x"), encoding: "base64" },
      ],
    });
    await c.files.writeBatch("sbx_1", [{ path: "/workspace/x", content: Uint8Array.of(1), mode: "0600" }]);
    expect(fetch.calls[1]!.body).toEqual({
      files: [{ path: "/workspace/x", content: "AQ==", encoding: "base64", mode: "0600" }],
    });
  });

  it("read decodes base64 (and tolerates utf8 content)", async () => {
    const { c } = client([
      json(ex.FILE_READ),
      json(ex.FILE_READ),
      json({ path: "/w/t", content: "plain ✓", encoding: "utf8" }),
    ]);
    const f = await c.files.read("sbx_1", "/workspace/x.py");
    expect(f).toMatchObject({ path: "/workspace/x.py", size: 28, modified_at: "2025-06-01T12:00:00Z" });
    expect(await c.files.readText("sbx_1", "/workspace/x.py")).toBe("print('hello from orkestr')");
    expect(await c.files.readText("sbx_1", "/w/t")).toBe("plain ✓");
  });

  it("read refuses a directory, list refuses a file, bad base64 is a parse error", async () => {
    const { c } = client([json(ex.DIR_READ), json(ex.FILE_READ), json({ ...ex.FILE_READ, content: "!!!" })]);
    await expect(c.files.read("sbx_1", "/workspace")).rejects.toMatchObject({ code: "is_a_directory" });
    await expect(c.files.list("sbx_1", "/workspace/x.py")).rejects.toMatchObject({ code: "not_a_directory" });
    await expect(c.files.read("sbx_1", "/workspace/x.py")).rejects.toBeInstanceOf(OrkestrParseError);
  });

  it("list accepts the wrapped and the bare shape", async () => {
    const { c } = client([json(ex.DIR_READ), json(ex.DIR_READ.entries)]);
    expect((await c.files.list("sbx_1", "/workspace")).map((e) => e.name)).toEqual(["x.py"]);
    expect((await c.files.list("sbx_1", "/workspace")).map((e) => e.is_dir)).toEqual([false]);
  });

  it("file errors keep their codes", async () => {
    const { c } = client([
      apiError(404, "file_not_found", "/workspace/nope not found"),
      apiError(413, "payload_too_large", "too big"),
    ]);
    await expect(c.files.read("sbx_1", "/workspace/nope")).rejects.toMatchObject({
      code: "file_not_found",
      status: 404,
    });
    await expect(c.files.read("sbx_1", "/workspace/huge")).rejects.toMatchObject({
      code: "payload_too_large",
      status: 413,
    });
  });

  it("rawUrl and readRaw", async () => {
    const { c, fetch } = client(
      () =>
        new Response(Uint8Array.of(1, 2, 3), {
          status: 206,
          headers: { "Content-Type": "application/octet-stream", "Content-Range": "bytes 0-2/10" },
        }),
    );
    expect(c.files.rawUrl("sbx_1", "/workspace/a b.bin")).toBe(
      "https://api.orkestr.eu/v1/sandboxes/sbx_1/files/raw?path=%2Fworkspace%2Fa+b.bin",
    );
    const r = await c.files.readRaw("sbx_1", "/workspace/a.bin", { range: "bytes=0-2" });
    expect(new Uint8Array(await r.arrayBuffer())).toEqual(Uint8Array.of(1, 2, 3));
    expect(fetch.calls[0]!.headers.get("range")).toBe("bytes=0-2");
  });

  it("writeRaw streams a ReadableStream without retries", async () => {
    const { c, fetch } = client(() => apiError(500, "internal_error", "x"));
    await expect(c.files.writeRaw("sbx_1", "/workspace/s", chunked(["a", "b"]))).rejects.toBeInstanceOf(OrkestrError);
    expect(fetch.calls).toHaveLength(1);
    expect(fetch.calls[0]!.headers.get("content-type")).toBe("application/octet-stream");
  });
});

describe("templates, previews, pty", () => {
  it("followLogs yields lines then the final frame", async () => {
    const { c, fetch } = client(() =>
      streamResponse([
        `data: ${JSON.stringify(ex.TEMPLATE_LOGS.lines[0])}\n\n`,
        ": keepalive\n\n",
        `data: ${JSON.stringify({ is_final: true, status: "failed", error: ex.TEMPLATE_FAILED_ERROR })}\n\n`,
      ]),
    );
    const ev = await collect(c.templates.followLogs("tmpl_1"));
    expect(ev).toEqual([
      { type: "line", line: ex.TEMPLATE_LOGS.lines[0] },
      {
        type: "final",
        status: "failed",
        error: ex.TEMPLATE_FAILED_ERROR,
        raw: { is_final: true, status: "failed", error: ex.TEMPLATE_FAILED_ERROR },
      },
    ]);
    expect(fetch.calls[0]!.query.get("follow")).toBe("true");
  });

  it("previews.hostFor builds <port>-<preview_host_base>", () => {
    const { c } = client(() => json(ok));
    expect(c.previews.hostFor({ preview_host_base: "sbx_1.sbx.orkestr.run" }, 3000)).toBe("3000-sbx_1.sbx.orkestr.run");
    expect(c.previews.hostFor({ preview_host_base: null }, 3000)).toBeNull();
    expect(c.previews.hostFor({ preview_host_base: "x" }, 70000)).toBeNull();
  });

  it("pty.wsUrl turns the base URL into a WebSocket URL", () => {
    expect(client(() => json(ok)).c.pty.wsUrl("sbx_1", "pty_1")).toBe(
      "wss://api.orkestr.eu/v1/sandboxes/sbx_1/pty/pty_1/ws",
    );
    expect(client(() => json(ok), "http://127.0.0.1:8787").c.pty.wsUrl("sbx_1", "pty_1")).toBe(
      "ws://127.0.0.1:8787/v1/sandboxes/sbx_1/pty/pty_1/ws",
    );
    expect(client(() => json(ok), "/api").c.pty.wsUrl("sbx_1", "pty_1")).toBe("/api/v1/sandboxes/sbx_1/pty/pty_1/ws");
  });

  it("request ids and methods are recorded for debugging", async () => {
    const { c } = client(() =>
      apiError(409, "volume_in_use", "Volume vol_1 is attached", {}, { "X-Request-Id": "req_9" }),
    );
    const err = (await c.volumes.delete("vol_1").catch((e: unknown) => e)) as OrkestrError;
    expect([err.requestId, err.method, err.url]).toEqual([
      "req_9",
      "DELETE",
      "https://api.orkestr.eu/v1/volumes/vol_1",
    ]);
  });
});
