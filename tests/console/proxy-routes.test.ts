import "server-only";
import { describe, expect, it, vi } from "vitest";
import { POST as localEngine } from "../../app/api/connections/local-engine/route";
import { GET as baseImages } from "../../app/api/v1/base-images/route";
import { GET as events } from "../../app/api/v1/sandboxes/[id]/events/route";
import { POST as batchWrite } from "../../app/api/v1/sandboxes/[id]/files/batch/route";
import { POST as presignDownload } from "../../app/api/v1/sandboxes/[id]/files/presign-download/route";
import { POST as presignUpload } from "../../app/api/v1/sandboxes/[id]/files/presign-upload/route";
import { GET as rawRead, PUT as rawWrite } from "../../app/api/v1/sandboxes/[id]/files/raw/route";
import { DELETE as deleteFile, GET as readFile, POST as writeFile } from "../../app/api/v1/sandboxes/[id]/files/route";
import { POST as execJson } from "../../app/api/v1/sandboxes/[id]/exec/route";
import { POST as execStream } from "../../app/api/v1/sandboxes/[id]/exec/stream/route";
import { GET as metrics } from "../../app/api/v1/sandboxes/[id]/metrics/route";
import { POST as pause } from "../../app/api/v1/sandboxes/[id]/pause/route";
import { POST as previewToken } from "../../app/api/v1/sandboxes/[id]/preview-token/route";
import { GET as preview } from "../../app/api/v1/sandboxes/[id]/previews/[port]/route";
import { POST as resume } from "../../app/api/v1/sandboxes/[id]/resume/route";
import { DELETE as terminate, PATCH as patchSandbox } from "../../app/api/v1/sandboxes/[id]/route";
import { POST as createSnapshot } from "../../app/api/v1/sandboxes/[id]/snapshots/route";
import { POST as setTimeoutRoute } from "../../app/api/v1/sandboxes/[id]/timeout/route";
import { GET as listSandboxes, POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { GET as sandboxesUsage } from "../../app/api/v1/sandboxes/usage/route";
import { GET as listSnapshots } from "../../app/api/v1/snapshots/route";
import { GET as templateLogs } from "../../app/api/v1/templates/[id]/logs/route";
import { GET as listTemplates, POST as createTemplate } from "../../app/api/v1/templates/route";
import { GET as usage } from "../../app/api/v1/usage/route";
import { POST as moveVolume } from "../../app/api/v1/volumes/[id]/move/route";
import { GET as listVolumes, POST as createVolume } from "../../app/api/v1/volumes/route";
import { GET as listWebhooks, POST as createWebhook } from "../../app/api/v1/webhooks/route";
import { listAuditEvents } from "../../lib/server/db/audit";
import { upsertConnection } from "../../lib/server/db/connections";
import { testBackends } from "../../lib/server/db/test-backends";
import { clearFaults, injectFault } from "../../engine/test/helpers/engine";
import { useLocalEngine } from "./engine-harness";
import { jsonOf, makeUser, noParams, ORIGIN, request, sessionCookie, useConsoleDb, type RequestInit2 } from "./helpers";

type Params = Record<string, string>;
type Handler = (req: Request, ctx: { params: Promise<Params> }) => Promise<Response>;

const params = (p: Params) => ({ params: Promise.resolve(p) });
const b64 = (s: string) => Buffer.from(s).toString("base64");

/** Reads a stream until `done(text)` holds or the time is up; returns the text and when it held. */
async function readUntil(
  body: ReadableStream<Uint8Array>,
  done: (text: string) => boolean,
  timeoutMs = 10_000,
): Promise<{ text: string; atMs: number | null }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const started = Date.now();
  let text = "";
  const timer = setTimeout(() => void reader.cancel().catch(() => undefined), timeoutMs);
  try {
    for (;;) {
      const { done: ended, value } = await reader.read();
      if (ended) return { text, atMs: null };
      text += decoder.decode(value, { stream: true });
      if (done(text)) return { text, atMs: Date.now() - started };
    }
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
}

describe.each(testBackends)("the /api/v1 proxy routes on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  async function connected() {
    const { user, teamId } = await makeUser(ctx.db(), "owner");
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    expect(
      (await localEngine(request("/api/connections/local-engine", { method: "POST", cookie }), noParams)).status,
    ).toBe(201);
    return { user, teamId: teamId!, cookie };
  }

  /** Calls a handler the way Next does: a request for `path` plus the route params. */
  function call(handler: Handler, path: string, p: Params, init: RequestInit2 = {}): Promise<Response> {
    return handler(request(path, init), params(p));
  }

  async function newSandbox(cookie: string): Promise<string> {
    const res = await createSandbox(
      request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "python-3.12" } }),
      noParams,
    );
    expect(res.status).toBe(201);
    return ((await jsonOf(res)) as { id: string }).id;
  }

  /** The engine's own answer to the same call, with the harness's token: what the proxy must pass on. */
  async function directAs(
    method: string,
    path: string,
    body?: unknown,
    token = ctx.engine().token,
  ): Promise<{ status: number; body: unknown }> {
    const engine = ctx.engine();
    const r = await fetch(`${engine.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? (JSON.parse(text) as unknown) : null };
  }

  it("pauses, resumes (with and without a body), sets the timeout and patches, with audit events", async () => {
    const { cookie, teamId } = await connected();
    const id = await newSandbox(cookie);
    const p = { id };

    const paused = await call(pause, `/api/v1/sandboxes/${id}/pause`, p, { method: "POST", cookie });
    expect(paused.status).toBe(200);
    expect(await jsonOf(paused)).toMatchObject({ id, status: "paused" });

    // No body at all, as the contract allows.
    const resumed = await call(resume, `/api/v1/sandboxes/${id}/resume`, p, { method: "POST", cookie });
    expect(resumed.status).toBe(200);
    expect(await jsonOf(resumed)).toMatchObject({ id, status: "running" });

    await call(pause, `/api/v1/sandboxes/${id}/pause`, p, { method: "POST", cookie });
    const resumedWithTimeout = await call(resume, `/api/v1/sandboxes/${id}/resume`, p, {
      method: "POST",
      cookie,
      body: { timeout_seconds: 600 },
    });
    expect(await jsonOf(resumedWithTimeout)).toMatchObject({ status: "running", timeout_seconds: 600 });

    const timeout = await call(setTimeoutRoute, `/api/v1/sandboxes/${id}/timeout`, p, {
      method: "POST",
      cookie,
      body: { timeout_seconds: 900 },
    });
    expect(timeout.status).toBe(200);
    const t = (await jsonOf(timeout)) as { id: string; timeout_seconds: number; expires_at: string };
    expect(t).toMatchObject({ id, timeout_seconds: 900 });
    expect(Date.parse(t.expires_at) - Date.now()).toBeGreaterThan(800_000);

    const patched = await call(patchSandbox, `/api/v1/sandboxes/${id}`, p, {
      method: "PATCH",
      cookie,
      body: { metadata: { run: "r_42" }, timeout_seconds: 300 },
    });
    expect(patched.status).toBe(200);
    expect(await jsonOf(patched)).toMatchObject({ id, metadata: { run: "r_42" }, timeout_seconds: 300 });

    // Baton's own validation: 422 with the field named, before anything reaches the upstream.
    for (const body of [{ timeout_seconds: 5 }, {}, { timeout_seconds: "soon" }]) {
      const bad = await call(setTimeoutRoute, `/api/v1/sandboxes/${id}/timeout`, p, { method: "POST", cookie, body });
      expect(bad.status).toBe(422);
      expect(await jsonOf(bad)).toMatchObject({
        code: "validation_error",
        errors: { timeout_seconds: expect.any(String) },
      });
    }
    const badResume = await call(resume, `/api/v1/sandboxes/${id}/resume`, p, {
      method: "POST",
      cookie,
      body: "{not json",
    });
    expect(badResume.status).toBe(400);

    // Upstream state errors keep their status and code: resuming a running sandbox.
    const notPaused = await call(resume, `/api/v1/sandboxes/${id}/resume`, p, { method: "POST", cookie });
    expect(notPaused.status).toBe(409);
    expect(await jsonOf(notPaused)).toMatchObject({ code: "sandbox_not_paused", detail: expect.any(String) });

    const actions = (await listAuditEvents(ctx.db(), { teamId })).filter((e) => e.target === id).map((e) => e.action);
    expect(actions).toEqual(
      expect.arrayContaining(["sandbox.pause", "sandbox.resume", "sandbox.set_timeout", "sandbox.update"]),
    );
    // Failed calls are not audited: two pauses, two resumes succeeded.
    expect(actions.filter((a) => a === "sandbox.resume")).toHaveLength(2);
    await call(terminate, `/api/v1/sandboxes/${id}`, p, { method: "DELETE", cookie });
  });

  it("passes the browser's Idempotency-Key on, so a retried create does not create twice", async () => {
    const { cookie } = await connected();
    const key = `matrix-${Date.now()}`;
    const send = () =>
      createSandbox(
        request("/api/v1/sandboxes", {
          method: "POST",
          cookie,
          body: { template: "python-3.12" },
          headers: { "idempotency-key": key },
        }),
        noParams,
      );
    const first = (await jsonOf(await send())) as { id: string };
    const again = (await jsonOf(await send())) as { id: string };
    expect(again.id).toBe(first.id);
    const other = await newSandbox(cookie);
    expect(other).not.toBe(first.id);
    for (const id of [first.id, other])
      await call(terminate, `/api/v1/sandboxes/${id}`, { id }, { method: "DELETE", cookie });
  });

  it("reads metrics with since=, and refuses a since that is no time", async () => {
    const { cookie } = await connected();
    const id = await newSandbox(cookie);
    const m = await call(metrics, `/api/v1/sandboxes/${id}/metrics`, { id }, { cookie });
    expect(m.status).toBe(200);
    expect(await jsonOf(m)).toMatchObject({
      sandbox_id: id,
      sandbox_status: "running",
      samples: expect.any(Array),
      lifetime: expect.any(Object),
    });

    const future = new Date(Date.now() + 3_600_000).toISOString();
    const none = await call(
      metrics,
      `/api/v1/sandboxes/${id}/metrics?since=${encodeURIComponent(future)}`,
      { id },
      { cookie },
    );
    expect(((await jsonOf(none)) as { samples: unknown[] }).samples).toEqual([]);
    const unix = await call(
      metrics,
      `/api/v1/sandboxes/${id}/metrics?since=${Math.floor(Date.now() / 1000) + 3600}`,
      { id },
      { cookie },
    );
    expect(unix.status).toBe(200);

    const bad = await call(metrics, `/api/v1/sandboxes/${id}/metrics?since=yesterday-ish`, { id }, { cookie });
    expect(bad.status).toBe(422);
    expect(await jsonOf(bad)).toMatchObject({ code: "validation_error", errors: { since: expect.any(String) } });
    await call(terminate, `/api/v1/sandboxes/${id}`, { id }, { method: "DELETE", cookie });
  });

  it("lists events with paging, and follows them as an unbuffered stream", async () => {
    const { cookie } = await connected();
    const id = await newSandbox(cookie);
    await call(execJson, `/api/v1/sandboxes/${id}/exec`, { id }, { method: "POST", cookie, body: { command: "true" } });

    const page = await call(events, `/api/v1/sandboxes/${id}/events`, { id }, { cookie });
    expect(page.status).toBe(200);
    const list = (await page.json()) as Array<{ id: string; type: string }>;
    expect(list.map((e) => e.type)).toEqual(expect.arrayContaining(["sandbox.created", "exec"]));

    const first = await call(events, `/api/v1/sandboxes/${id}/events?limit=1`, { id }, { cookie });
    const cursor = first.headers.get("x-next-cursor");
    expect(cursor).toBeTruthy();
    expect((await first.json()) as unknown[]).toHaveLength(1);
    const rest = await call(events, `/api/v1/sandboxes/${id}/events?cursor=${cursor}`, { id }, { cookie });
    expect(((await rest.json()) as unknown[]).length).toBe(list.length - 1);

    // follow=true: the backlog arrives at once, then a new event while the stream stays open.
    const abort = new AbortController();
    const req = new Request(request(`/api/v1/sandboxes/${id}/events?follow=true`, { cookie }), {
      signal: abort.signal,
    });
    const res = await events(req, params({ id }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("x-accel-buffering")).toBe("no");
    const body = res.body!;
    const backlog = await readUntil(body, (text) => text.includes('"exec"'));
    expect(backlog.atMs).not.toBeNull();
    expect(backlog.text).toContain("sandbox.created");
    const started = Date.now();
    const live = readUntil(body, (text) => text.includes("/workspace/live.txt"));
    const written = await call(
      writeFile,
      `/api/v1/sandboxes/${id}/files`,
      { id },
      { method: "POST", cookie, body: { path: "/workspace/live.txt", content: b64("x") } },
    );
    expect(written.status).toBe(201);
    const arrived = await live;
    expect(arrived.atMs).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(arrived.text).toContain("file.write");
    abort.abort();
    await body.cancel().catch(() => undefined);

    // Baton's query validation, and the upstream's 404 for an unknown sandbox.
    expect((await call(events, `/api/v1/sandboxes/${id}/events?limit=0`, { id }, { cookie })).status).toBe(422);
    expect((await call(events, `/api/v1/sandboxes/${id}/events?follow=maybe`, { id }, { cookie })).status).toBe(422);
    const missing = await call(
      events,
      "/api/v1/sandboxes/sbx_01NOSUCH/events?follow=true",
      { id: "sbx_01NOSUCH" },
      { cookie },
    );
    expect(missing.status).toBe(404);
    expect(await jsonOf(missing)).toMatchObject({ code: "sandbox_not_found" });
    await call(terminate, `/api/v1/sandboxes/${id}`, { id }, { method: "DELETE", cookie });
  });

  it("writes, reads, lists, batch-writes and deletes files; upstream path errors come through", async () => {
    const { cookie } = await connected();
    const id = await newSandbox(cookie);
    const p = { id };
    const files = `/api/v1/sandboxes/${id}/files`;

    const w = await call(writeFile, files, p, {
      method: "POST",
      cookie,
      body: { path: "/workspace/dir/a.txt", content: b64("hello\n") },
    });
    expect(w.status).toBe(201);
    expect(await jsonOf(w)).toMatchObject({ path: "/workspace/dir/a.txt", size: 6 });
    const text = await call(writeFile, files, p, {
      method: "POST",
      cookie,
      body: { path: "/workspace/dir/b.txt", content: "plain text", encoding: "utf8", mode: "0600" },
    });
    expect(await jsonOf(text)).toMatchObject({ size: 10 });

    const read = await call(readFile, `${files}?path=/workspace/dir/a.txt`, p, { cookie });
    expect(read.status).toBe(200);
    const file = (await jsonOf(read)) as { type: string; content: string; size: number };
    expect(file).toMatchObject({ type: "file", size: 6 });
    expect(Buffer.from(file.content, "base64").toString()).toBe("hello\n");

    const dir = await call(readFile, `${files}?path=/workspace/dir`, p, { cookie });
    const listing = (await jsonOf(dir)) as { type: string; entries: Array<{ name: string }> };
    expect(listing.type).toBe("directory");
    expect(listing.entries.map((e) => e.name).sort()).toEqual(["a.txt", "b.txt"]);

    const batch = await call(batchWrite, `${files}/batch`, p, {
      method: "POST",
      cookie,
      body: {
        files: [
          { path: "/workspace/batch/1.txt", content: b64("one") },
          { path: "/workspace/batch/2.txt", content: "two", encoding: "utf8" },
        ],
      },
    });
    expect(batch.status).toBe(200);
    expect(await jsonOf(batch)).toMatchObject({
      written: [
        { path: "/workspace/batch/1.txt", size: 3 },
        { path: "/workspace/batch/2.txt", size: 3 },
      ],
      errors: [],
    });

    expect((await call(deleteFile, `${files}?path=/workspace/dir/a.txt`, p, { method: "DELETE", cookie })).status).toBe(
      204,
    );
    const gone = await call(readFile, `${files}?path=/workspace/dir/a.txt`, p, { cookie });
    expect(gone.status).toBe(404);
    expect(await jsonOf(gone)).toMatchObject({ code: "file_not_found" });
    const notEmpty = await call(deleteFile, `${files}?path=/workspace/batch`, p, { method: "DELETE", cookie });
    expect(notEmpty.status).toBe(409);
    expect(await jsonOf(notEmpty)).toMatchObject({ code: "directory_not_empty" });
    expect(
      (await call(deleteFile, `${files}?path=/workspace/batch&recursive=true`, p, { method: "DELETE", cookie })).status,
    ).toBe(204);

    // Path rules are the upstream's: a relative path or `..` is its 400 invalid_path, passed on.
    for (const bad of ["workspace/x.txt", "/workspace/../etc/passwd"]) {
      const res = await call(readFile, `${files}?path=${encodeURIComponent(bad)}`, p, { cookie });
      expect(res.status).toBe(400);
      expect(await jsonOf(res)).toMatchObject({ code: "invalid_path", detail: expect.any(String) });
    }
    const badWrite = await call(writeFile, files, p, {
      method: "POST",
      cookie,
      body: { path: "relative.txt", content: b64("x") },
    });
    expect(badWrite.status).toBe(400);

    // Baton's own validation: missing path, content that is not base64, a bad mode.
    expect((await call(readFile, files, p, { cookie })).status).toBe(422);
    const notB64 = await call(writeFile, files, p, {
      method: "POST",
      cookie,
      body: { path: "/workspace/x", content: "***" },
    });
    expect(notB64.status).toBe(422);
    expect(await jsonOf(notB64)).toMatchObject({ errors: { content: "is not valid base64" } });
    expect(
      (
        await call(writeFile, files, p, {
          method: "POST",
          cookie,
          body: { path: "/workspace/x", content: "", mode: "rwx" },
        })
      ).status,
    ).toBe(422);
    expect((await call(batchWrite, `${files}/batch`, p, { method: "POST", cookie, body: { files: [] } })).status).toBe(
      422,
    );
    await call(terminate, `/api/v1/sandboxes/${id}`, p, { method: "DELETE", cookie });
  });

  it("streams raw file bytes both ways, and hands out Baton links instead of the upstream's presigned URLs", async () => {
    const { cookie } = await connected();
    const id = await newSandbox(cookie);
    const p = { id };
    const raw = `/api/v1/sandboxes/${id}/files/raw`;

    // Upload: a streamed request body (no base64, no JSON), passed on as it comes.
    const chunks = ["<html><script>alert(1)</script>", "\n".repeat(10), "x".repeat(100_000)];
    const upload = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const put = new Request(`${ORIGIN}${raw}?path=/workspace/page.html`, {
      method: "PUT",
      headers: {
        host: "baton.test",
        origin: ORIGIN,
        "sec-fetch-site": "same-origin",
        cookie,
        "content-type": "application/octet-stream",
      },
      body: upload,
      duplex: "half",
    } as RequestInit & { duplex: "half" });
    const uploaded = await rawWrite(put, params(p));
    expect(uploaded.status).toBe(201);
    expect(await jsonOf(uploaded)).toMatchObject({ path: "/workspace/page.html", size: 31 + 10 + 100_000 });

    // Download: the bytes, always as an attachment that the browser will not render or sniff.
    const got = await call(rawRead, `${raw}?path=/workspace/page.html`, p, { cookie });
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("application/octet-stream");
    expect(got.headers.get("content-disposition")).toBe("attachment; filename*=UTF-8''page.html");
    expect(got.headers.get("x-content-type-options")).toBe("nosniff");
    expect(got.headers.get("content-security-policy")).toContain("sandbox");
    expect(got.headers.get("cache-control")).toBe("private, no-store");
    const bytes = Buffer.from(await got.arrayBuffer());
    expect(bytes.length).toBe(100_041);
    expect(bytes.subarray(0, 8).toString()).toBe("<html><s");

    const part = await call(rawRead, `${raw}?path=/workspace/page.html`, p, {
      cookie,
      headers: { range: "bytes=0-5" },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 0-5/100041");
    expect(await part.text()).toBe("<html>");

    const missing = await call(rawRead, `${raw}?path=/workspace/none`, p, { cookie });
    expect(missing.status).toBe(404);
    expect(await jsonOf(missing)).toMatchObject({ code: "file_not_found" });

    // Presigned URLs: validated upstream, but the link is Baton's own route: no signature, no upstream host.
    const engine = ctx.engine();
    for (const [handler, what, method] of [
      [presignDownload, "presign-download", "GET"],
      [presignUpload, "presign-upload", "PUT"],
    ] as const) {
      const res = await call(handler, `/api/v1/sandboxes/${id}/files/${what}`, p, {
        method: "POST",
        cookie,
        body: { path: "/workspace/./page.html", expires_in_seconds: 60 },
      });
      expect(res.status).toBe(200);
      const link = (await jsonOf(res)) as { url: string; method: string };
      expect(link).toMatchObject({
        // The tab's team rides along: a download link or an XHR upload sends no X-Baton-Team.
        url: expect.stringMatching(
          new RegExp(`^/api/v1/sandboxes/${id}/files/raw\\?path=%2Fworkspace%2Fpage\\.html&team=[a-z0-9-]+$`),
        ),
        method,
        expires_at: null,
      });
      const text = JSON.stringify(link);
      for (const secret of ["sig=", "exp=", engine.origin, new URL(engine.origin).host, engine.token])
        expect(text).not.toContain(secret);
    }
    const badPresign = await call(presignDownload, `/api/v1/sandboxes/${id}/files/presign-download`, p, {
      method: "POST",
      cookie,
      body: { path: "nope" },
    });
    expect(badPresign.status).toBe(400);
    expect(await jsonOf(badPresign)).toMatchObject({ code: "invalid_path" });

    // A cross-site upload is refused before anything is read.
    const cross = await call(rawWrite, `${raw}?path=/workspace/x`, p, {
      method: "PUT",
      cookie,
      body: "x",
      headers: { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
    });
    expect(cross.status).toBe(403);
    await call(terminate, `/api/v1/sandboxes/${id}`, p, { method: "DELETE", cookie });
  });

  it("passes an upstream 501 (and any 5xx) through with its status and code, in Baton's own words", async () => {
    const { cookie } = await connected();
    await injectFault(ctx.engine(), { kind: "error", status: 501, path: "^/v1/snapshots$", method: "GET", count: 1 });
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const res = await listSnapshots(request("/api/v1/snapshots", { cookie }), noParams);
      expect(res.status).toBe(501);
      // The upstream's own detail ("Injected 501 fault") is for the server log only.
      expect(await jsonOf(res)).toEqual({
        detail: "The orkestr API does not implement this (501).",
        code: "fault_injected",
      });
      expect(logged.mock.calls.map((c) => String(c[0])).join("\n")).toContain("Injected 501 fault");
    } finally {
      logged.mockRestore();
      await clearFaults(ctx.engine());
    }
  });

  it("snapshots, volumes, templates, webhooks, previews and usage: a 2xx of the right shape, or exactly the upstream's {detail, code} error", async () => {
    const { cookie, teamId } = await connected();
    const id = await newSandbox(cookie);
    // The engine's answer as the team's own engine account sees it (the console mints one per team).
    const teamToken = await ctx.engine().mint(["sandboxes:read", "sandboxes:write"], { account: teamId.toLowerCase() });
    const direct = (method: string, path: string, body?: unknown) => directAs(method, path, body, teamToken);
    // These resources are being built in the engine right now: whatever it answers today, the
    // proxy must answer the same status and code (a success in the contract's shape).
    const cases: Array<{
      name: string;
      res: Promise<Response>;
      upstream: Promise<{ status: number; body: unknown }>;
      shape: (body: unknown) => void;
    }> = [
      {
        name: "GET snapshots",
        res: listSnapshots(request("/api/v1/snapshots?limit=5", { cookie }), noParams),
        upstream: direct("GET", "/snapshots?limit=5"),
        shape: (b) => expect(Array.isArray(b)).toBe(true),
      },
      {
        name: "GET volumes",
        res: listVolumes(request("/api/v1/volumes", { cookie }), noParams),
        upstream: direct("GET", "/volumes"),
        shape: (b) => expect(Array.isArray(b)).toBe(true),
      },
      {
        name: "GET templates",
        res: listTemplates(request("/api/v1/templates?include_builtin=true", { cookie }), noParams),
        upstream: direct("GET", "/templates?include_builtin=true"),
        shape: (b) => expect(Array.isArray(b)).toBe(true),
      },
      {
        name: "GET webhooks",
        res: listWebhooks(request("/api/v1/webhooks", { cookie }), noParams),
        upstream: direct("GET", "/webhooks"),
        shape: (b) => expect(Array.isArray(b)).toBe(true),
      },
      {
        name: "GET base-images",
        res: baseImages(request("/api/v1/base-images", { cookie }), noParams),
        upstream: direct("GET", "/base-images"),
        shape: (b) => expect(b).toEqual(expect.arrayContaining([expect.objectContaining({ id: "python-3.12" })])),
      },
      {
        name: "GET sandboxes/usage",
        res: sandboxesUsage(request("/api/v1/sandboxes/usage?granularity=day", { cookie }), noParams),
        upstream: direct("GET", "/sandboxes/usage?granularity=day"),
        shape: (b) => expect(b).toBeTypeOf("object"),
      },
      {
        name: "GET usage",
        res: usage(request("/api/v1/usage", { cookie }), noParams),
        upstream: direct("GET", "/sandboxes/usage"),
        shape: (b) => expect(b).toBeTypeOf("object"),
      },
      {
        name: "GET previews/3000",
        res: preview(request(`/api/v1/sandboxes/${id}/previews/3000`, { cookie }), params({ id, port: "3000" })),
        upstream: direct("GET", `/sandboxes/${id}/previews/3000`),
        shape: (b) => expect(b).toBeTypeOf("object"),
      },
      {
        name: "GET template logs",
        res: templateLogs(request("/api/v1/templates/tmpl_01NOSUCH/logs", { cookie }), params({ id: "tmpl_01NOSUCH" })),
        upstream: direct("GET", "/templates/tmpl_01NOSUCH/logs"),
        shape: () => undefined,
      },
      {
        name: "POST volumes/move",
        res: moveVolume(
          request("/api/v1/volumes/vol_01NOSUCH/move", { method: "POST", cookie, body: { region: "hel1" } }),
          params({ id: "vol_01NOSUCH" }),
        ),
        upstream: direct("POST", "/volumes/vol_01NOSUCH/move", { region: "hel1" }),
        shape: () => undefined,
      },
    ];
    for (const c of cases) {
      const [res, upstream] = await Promise.all([c.res, c.upstream]);
      expect(res.status, c.name).toBe(upstream.status);
      const body = res.status === 204 ? null : ((await res.json()) as unknown);
      if (res.ok) c.shape(body);
      else
        expect(body, c.name).toMatchObject({
          code: (upstream.body as { code: string }).code,
          detail: expect.any(String),
        });
    }

    // Creates: a 2xx with an id (and the one-time secret for webhooks, no-store), or the upstream's error.
    const creates: Array<[string, Promise<Response>]> = [
      [
        "snapshot",
        createSnapshot(
          request(`/api/v1/sandboxes/${id}/snapshots`, {
            method: "POST",
            cookie,
            body: { name: `snap-${Date.now()}` },
          }),
          params({ id }),
        ),
      ],
      [
        "volume",
        createVolume(
          request("/api/v1/volumes", { method: "POST", cookie, body: { name: `vol-${Date.now()}`, size_gb: 1 } }),
          noParams,
        ),
      ],
      [
        "template",
        createTemplate(
          request("/api/v1/templates", {
            method: "POST",
            cookie,
            body: { name: `t-${Date.now()}`, base_image: "python-3.12", steps: [] },
          }),
          noParams,
        ),
      ],
      [
        "webhook",
        createWebhook(
          request("/api/v1/webhooks", { method: "POST", cookie, body: { url: "https://example.com/hook" } }),
          noParams,
        ),
      ],
      [
        "preview-token",
        previewToken(request(`/api/v1/sandboxes/${id}/preview-token`, { method: "POST", cookie }), params({ id })),
      ],
    ];
    let templateId: string | null = null;
    for (const [name, pending] of creates) {
      const res = await pending;
      const body = (await res.json()) as Record<string, unknown>;
      if (name === "template" && res.ok) templateId = body.id as string;
      expect(res.headers.get("cache-control"), name).toBe("no-store");
      if (res.ok)
        expect(name === "preview-token" ? body.preview_auth_token : body.id, name).toEqual(expect.any(String));
      else
        expect(body, name).toEqual(expect.objectContaining({ code: expect.any(String), detail: expect.any(String) }));
      expect(res.status, name).not.toBe(401);
    }

    // Build logs, paged and followed: the follow stream comes through as the upstream sends it.
    const tid = templateId ?? "tmpl_01NOSUCH";
    const logs = await templateLogs(request(`/api/v1/templates/${tid}/logs?limit=10`, { cookie }), params({ id: tid }));
    expect(logs.status).toBe((await direct("GET", `/templates/${tid}/logs?limit=10`)).status);
    if (logs.ok) expect(await jsonOf(logs)).toMatchObject({ lines: expect.any(Array) });
    const abort = new AbortController();
    const follow = await templateLogs(
      new Request(request(`/api/v1/templates/${tid}/logs?follow=true`, { cookie }), { signal: abort.signal }),
      params({ id: tid }),
    );
    const upstreamFollow = await fetch(`${ctx.engine().url}/templates/${tid}/logs?follow=true`, {
      headers: { authorization: `Bearer ${teamToken}`, accept: "text/event-stream" },
    });
    expect(follow.status).toBe(upstreamFollow.status);
    await upstreamFollow.body?.cancel();
    if (follow.ok) {
      expect(follow.headers.get("content-type")).toBe(upstreamFollow.headers.get("content-type"));
      expect(follow.headers.get("x-accel-buffering")).toBe("no");
    }
    abort.abort();
    await follow.body?.cancel().catch(() => undefined);
    await call(terminate, `/api/v1/sandboxes/${id}`, { id }, { method: "DELETE", cookie });
  });

  it("validates the new routes' inputs with 422 before calling the upstream", async () => {
    const { cookie } = await connected();
    const cases: Array<[string, Promise<Response>]> = [
      [
        "volume without name",
        createVolume(request("/api/v1/volumes", { method: "POST", cookie, body: { size_gb: 1 } }), noParams),
      ],
      [
        "volume size 0",
        createVolume(request("/api/v1/volumes", { method: "POST", cookie, body: { name: "v", size_gb: 0 } }), noParams),
      ],
      [
        "template without base image",
        createTemplate(request("/api/v1/templates", { method: "POST", cookie, body: { name: "t" } }), noParams),
      ],
      [
        "webhook with no URL",
        createWebhook(request("/api/v1/webhooks", { method: "POST", cookie, body: { url: "not a url" } }), noParams),
      ],
      [
        "templates include_builtin=yes",
        listTemplates(request("/api/v1/templates?include_builtin=yes", { cookie }), noParams),
      ],
      ["volumes limit=abc", listVolumes(request("/api/v1/volumes?limit=abc", { cookie }), noParams)],
      ["usage granularity=week", usage(request("/api/v1/usage?granularity=week", { cookie }), noParams)],
      [
        "preview port 0",
        preview(request("/api/v1/sandboxes/sbx_1/previews/0", { cookie }), params({ id: "sbx_1", port: "0" })),
      ],
      [
        "preview port 70000",
        preview(request("/api/v1/sandboxes/sbx_1/previews/70000", { cookie }), params({ id: "sbx_1", port: "70000" })),
      ],
      [
        "snapshot name too long",
        createSnapshot(
          request("/api/v1/sandboxes/sbx_1/snapshots", { method: "POST", cookie, body: { name: "n".repeat(200) } }),
          params({ id: "sbx_1" }),
        ),
      ],
      [
        "move without region",
        moveVolume(
          request("/api/v1/volumes/vol_1/move", { method: "POST", cookie, body: {} }),
          params({ id: "vol_1" }),
        ),
      ],
    ];
    for (const [name, pending] of cases) {
      const res = await pending;
      expect(res.status, name).toBe(422);
      expect(await jsonOf(res), name).toMatchObject({ code: "validation_error", detail: expect.any(String) });
    }
  });

  describe("a token the upstream refuses", () => {
    it("answers 409 connection_token_rejected naming the connection, never 401 (which means the Baton session ended)", async () => {
      const { user } = await makeUser(ctx.db(), "owner");
      const { cookie } = await sessionCookie(ctx.db(), user.id);
      // A revoked token: well-formed, but the engine knows no such token (it has no revoke API).
      const revoked = `ork_${"r".repeat(20)}${Date.now()}`;
      await upsertConnection(ctx.db(), {
        userId: user.id,
        name: "Prod orkestr",
        baseUrl: ctx.engine().origin,
        token: revoked,
        activate: true,
      });

      const calls: Array<[string, Promise<Response>]> = [
        ["list", listSandboxes(request("/api/v1/sandboxes", { cookie }), noParams)],
        [
          "create",
          createSandbox(
            request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "python-3.12" } }),
            noParams,
          ),
        ],
        [
          "exec stream",
          execStream(
            request("/api/v1/sandboxes/sbx_1/exec/stream", { method: "POST", cookie, body: { command: "true" } }),
            params({ id: "sbx_1" }),
          ),
        ],
        [
          "events follow",
          events(request("/api/v1/sandboxes/sbx_1/events?follow=true", { cookie }), params({ id: "sbx_1" })),
        ],
        [
          "raw file",
          rawRead(request("/api/v1/sandboxes/sbx_1/files/raw?path=/x", { cookie }), params({ id: "sbx_1" })),
        ],
      ];
      for (const [name, pending] of calls) {
        const res = await pending;
        expect(res.status, name).toBe(409);
        const body = await jsonOf(res);
        expect(body, name).toMatchObject({ code: "connection_token_rejected" });
        expect(body.detail).toContain('"Prod orkestr"');
        expect(body.detail).toContain("Settings → Connections");
        expect(body.detail).toMatch(/revoked/);
        expect(JSON.stringify(body)).not.toContain(revoked);
      }
    });

    it("maps a token without the needed scope (403 insufficient_scope) the same way; other upstream 403s pass through", async () => {
      const { user } = await makeUser(ctx.db(), "owner");
      const { cookie } = await sessionCookie(ctx.db(), user.id);
      const readOnly = await ctx.engine().mint(["sandboxes:read"]);
      await upsertConnection(ctx.db(), {
        userId: user.id,
        name: "Read only",
        baseUrl: ctx.engine().origin,
        token: readOnly,
        activate: true,
      });

      expect((await listSandboxes(request("/api/v1/sandboxes", { cookie }), noParams)).status).toBe(200);
      const denied = await createSandbox(
        request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "python-3.12" } }),
        noParams,
      );
      expect(denied.status).toBe(409);
      const body = await jsonOf(denied);
      expect(body).toMatchObject({ code: "connection_token_rejected" });
      expect(body.detail).toContain('"Read only"');
      expect(body.detail).toContain("sandboxes:write");
      expect(body.detail).toContain("Settings → Connections");

      // A plan refusal is about the request, not the token: it keeps the upstream's 403 and code.
      const { cookie: ownerCookie } = await connected();
      const tooBig = await createSandbox(
        request("/api/v1/sandboxes", {
          method: "POST",
          cookie: ownerCookie,
          body: { template: "python-3.12", size: "large" },
        }),
        noParams,
      );
      const upstream = await directAs("POST", "/sandboxes", { template: "python-3.12", size: "large" });
      expect(tooBig.status).toBe(upstream.status);
      if (upstream.status === 403)
        expect(await jsonOf(tooBig)).toMatchObject({ code: (upstream.body as { code: string }).code });
      else if (upstream.status === 201) await directAs("DELETE", `/sandboxes/${(upstream.body as { id: string }).id}`);
      if (tooBig.status === 201) {
        const created = (await jsonOf(tooBig)) as { id: string };
        await call(
          terminate,
          `/api/v1/sandboxes/${created.id}`,
          { id: created.id },
          { method: "DELETE", cookie: ownerCookie },
        );
      }
    });
  });
});
