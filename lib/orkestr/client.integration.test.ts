import fs from "node:fs";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeFaults, injectFault, startEngine, type EngineHandle } from "../../engine/test/helpers/engine";
import { createOrkestrClient, type FetchLike, type OrkestrClient } from "./core";
import { OrkestrConnectionError, OrkestrError, OrkestrTimeoutError } from "./errors";
import type { SandboxEvent } from "./schemas/events";
import { passthrough, type ExecStreamEvent } from "./stream";
import { rejectsWith } from "../../engine/test/helpers/async";

/**
 * The client against the real local engine (real namespaces, cgroups, HTTP): every call goes
 * through the same code the console will use, nothing is mocked.
 */

let e: EngineHandle;
let client: OrkestrClient;
const calls: { method: string; url: string; headers: Headers }[] = [];
const counting: FetchLike = (url, init) => {
  calls.push({
    method: init?.method ?? "GET",
    url,
    headers: new Headers(init?.headers as ConstructorParameters<typeof Headers>[0]),
  });
  return fetch(url, init);
};
const callsTo = (method: string, re: RegExp) =>
  calls.filter((c) => c.method === method && re.test(new URL(c.url).pathname));

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const outputOf = (events: ExecStreamEvent[], stream: string) =>
  events.filter(
    (ev): ev is Extract<ExecStreamEvent, { type: "output" }> => ev.type === "output" && ev.stream === stream,
  );

beforeAll(async () => {
  // The webhook test's receiver is on loopback (port 9, nothing listens): an internal origin, allowed explicitly.
  e = await startEngine({
    env: {
      ORKESTR_ENGINE_SAMPLE_MS: "200",
      ORKESTR_ENGINE_KEEPALIVE_MS: "100",
      ORKESTR_ENGINE_WEBHOOK_ALLOW: "http://127.0.0.1:9",
    },
  });
  // The SDK style base URL, without /v1 (C5).
  client = createOrkestrClient({ baseUrl: e.origin, token: e.token, fetch: counting });
}, 60_000);

afterAll(async () => {
  await e?.stop();
  // The helper leaves its temporary data dir behind; this file cleans up after itself.
  if (e?.dataDir) fs.rmSync(e.dataDir, { recursive: true, force: true, maxRetries: 3 });
}, 30_000);

describe("catalog", () => {
  it("reads the limits, with and without /v1 in the base URL", async () => {
    const limits = await client.sandboxes.limits();
    expect(limits.plan).toBe("payg");
    expect(limits.regions).toEqual(["fsn1", "hel1", "rbx"]);
    expect(limits.sizes?.map((s) => s.size)).toEqual(["small", "medium", "large"]);
    expect(limits.capabilities).toMatchObject({ exec_stream: ["sse", "ndjson"] });
    const viaV1 = createOrkestrClient({ baseUrl: e.url, token: e.token });
    expect((await viaV1.sandboxes.limits()).plan).toBe("payg");
  });

  it("lists the base images", async () => {
    const images = await client.baseImages.list();
    expect(images.map((i) => i.id)).toContain("python-3.12");
    expect(images.every((i) => typeof i.description === "string")).toBe(true);
  });
});

describe("a sandbox's life through the client", () => {
  let id = "";

  it("creates a sandbox (201 running) and finds it again", async () => {
    const sbx = await client.sandboxes.create({
      template: "python-3.12",
      metadata: { suite: "client-integration" },
      timeout_seconds: 600,
    });
    id = sbx.id;
    expect(sbx.id).toMatch(/^sbx_/);
    expect(sbx.status).toBe("running");
    expect(sbx.metadata).toEqual({ suite: "client-integration" });
    expect((await client.sandboxes.get(id)).status).toBe("running");
    const page = await client.sandboxes.list({
      metadata: { suite: "client-integration" },
      status: ["running", "paused"],
    });
    expect(page.items.map((s) => s.id)).toEqual([id]);
    const all: string[] = [];
    for await (const s of client.sandboxes.listAll({ limit: 1 })) all.push(s.id);
    expect(all).toContain(id);
  });

  it("runs a command; a non-zero exit is a result", async () => {
    const r = await client.exec.run(id, "echo hi; echo err >&2; exit 3");
    expect(r).toMatchObject({ stdout: "hi\n", stderr: "err\n", exit_code: 3, timed_out: false });
    expect(typeof r.duration_ms).toBe("number");
  });

  it("streams a command over SSE, keepalives and non-UTF-8 bytes included", async () => {
    const events = await collect(
      client.exec.stream(id, { command: "printf 'a\\n'; sleep 0.35; printf '\\377\\376'; printf 'b\\n' >&2; exit 2" }),
    );
    expect(events.at(-1)).toMatchObject({ type: "exit", exit_code: 2, timed_out: false });
    expect(
      outputOf(events, "stdout")
        .map((o) => o.data)
        .join(""),
    ).toBe("a\n\ufffd\ufffd");
    const bytes = outputOf(events, "stdout").flatMap((o) => [...o.bytes]);
    expect(bytes).toEqual([0x61, 0x0a, 0xff, 0xfe]);
    expect(outputOf(events, "stdout").some((o) => o.encoding === "base64")).toBe(true);
    expect(
      outputOf(events, "stderr")
        .map((o) => o.data)
        .join(""),
    ).toBe("b\n");
  });

  it("streams over NDJSON too", async () => {
    const events = await collect(client.exec.stream(id, "echo nd", { format: "ndjson" }));
    expect(events.map((ev) => ev.type)).toEqual(["output", "exit"]);
  });

  it("hands a proxy the raw upstream stream", async () => {
    const upstream = await client.exec.raw(id, "echo raw");
    const proxied = passthrough(upstream);
    expect(proxied.headers.get("content-type")).toBe("text/event-stream");
    expect(proxied.headers.get("x-accel-buffering")).toBe("no");
    const text = await proxied.text();
    expect(text).toContain('data: {"stream":"stdout","data":"raw\\n"}');
    expect(text).toContain('"is_final":true');
  });

  it("writes, reads, lists and deletes files", async () => {
    expect(await client.files.write(id, "/workspace/dir/hello.txt", "héllo ✓\n")).toMatchObject({
      path: "/workspace/dir/hello.txt",
      size: 11,
    });
    await client.files.write(id, "/workspace/bin.dat", Uint8Array.of(0, 1, 2, 255), { mode: "0600" });
    expect(await client.files.readText(id, "/workspace/dir/hello.txt")).toBe("héllo ✓\n");
    const bin = await client.files.read(id, "/workspace/bin.dat");
    expect([...bin.bytes]).toEqual([0, 1, 2, 255]);
    expect(bin.size).toBe(4);
    const entries = await client.files.list(id, "/workspace");
    expect(entries.map((en) => [en.name, en.is_dir])).toEqual(
      expect.arrayContaining([
        ["dir", true],
        ["bin.dat", false],
      ]),
    );

    const batch = await client.files.writeBatch(id, { "/workspace/src/app.py": "print('hi')\n", "relative/path": "x" });
    expect(batch.written.map((w) => w.path)).toEqual(["/workspace/src/app.py"]);
    expect(batch.errors).toHaveLength(1);
    expect((await client.exec.run(id, "python3 /workspace/src/app.py")).stdout).toBe("hi\n");

    await client.files.delete(id, "/workspace/bin.dat");
    const gone = await rejectsWith(client.files.read(id, "/workspace/bin.dat"), OrkestrError);
    expect([gone.status, gone.code]).toEqual([404, "file_not_found"]);
    const notEmpty = await rejectsWith(client.files.delete(id, "/workspace/dir"), OrkestrError);
    expect(notEmpty.code).toBe("directory_not_empty");
    await client.files.delete(id, "/workspace/dir", { recursive: true });
    expect((await client.files.list(id, "/workspace")).map((en) => en.name)).not.toContain("dir");
  });

  it("moves bytes through presigned and raw URLs", async () => {
    const up = await client.files.presignUpload(id, "/workspace/up.bin", { expiresInSeconds: 60 });
    expect(up.method).toBe("PUT");
    const put = await fetch(up.url, { method: "PUT", body: Uint8Array.of(9, 8, 7), headers: up.headers ?? {} });
    expect(put.status).toBe(201);
    expect([...(await client.files.read(id, "/workspace/up.bin")).bytes]).toEqual([9, 8, 7]);

    const down = await client.files.presignDownload(id, "/workspace/up.bin");
    const got = await fetch(down.url);
    expect(new Uint8Array(await got.arrayBuffer())).toEqual(Uint8Array.of(9, 8, 7));

    const viaBearer = await fetch(client.files.rawUrl(id, "/workspace/up.bin"), {
      headers: { Authorization: `Bearer ${e.token}` },
    });
    expect(viaBearer.status).toBe(200);
    const ranged = await client.files.readRaw(id, "/workspace/up.bin", { range: "bytes=1-" });
    expect(ranged.status).toBe(206);
    expect(new Uint8Array(await ranged.arrayBuffer())).toEqual(Uint8Array.of(8, 7));
    expect(await client.files.writeRaw(id, "/workspace/raw.txt", "raw bytes")).toMatchObject({
      path: "/workspace/raw.txt",
      size: 9,
    });
    expect(await client.files.readText(id, "/workspace/raw.txt")).toBe("raw bytes");
  });

  it("reads live metrics, and only newer samples with since", async () => {
    await new Promise((r) => setTimeout(r, 700));
    const m = await client.sandboxes.metrics(id);
    expect(m.sandbox_id).toBe(id);
    expect(m.sandbox_status).toBe("running");
    expect(m.sample_interval_seconds).toBe(0.2);
    expect(m.samples.length).toBeGreaterThan(0);
    expect(typeof m.memory?.limit_bytes).toBe("number");
    const last = m.samples.at(-1)!.t;
    const newer = await client.sandboxes.metrics(id, new Date(String(last)));
    expect(newer.samples.every((s) => Date.parse(String(s.t)) > Date.parse(String(last)))).toBe(true);
  });

  it("reads the activity timeline, paged and followed live", async () => {
    const page = await client.sandboxes.events(id);
    const types = page.items.map((ev) => ev.type);
    expect(types[0]).toBe("sandbox.created");
    expect(types).toEqual(expect.arrayContaining(["exec", "exec.stream", "file.write", "file.delete"]));
    const all = await collect(client.sandboxes.allEvents(id, { limit: 3 }));
    expect(all.map((ev) => ev.id)).toEqual(page.items.map((ev) => ev.id));
    expect(
      (await client.sandboxes.events(id, { type: "file.delete" })).items.every((ev) => ev.type === "file.delete"),
    ).toBe(true);

    const ac = new AbortController();
    const seen: SandboxEvent[] = [];
    const follow = (async () => {
      for await (const ev of client.sandboxes.followEvents(id, {}, { signal: ac.signal })) {
        seen.push(ev);
        if (ev.type === "exec" && ev.data.command === "echo live") ac.abort();
      }
    })();
    // Wait for the backlog, then cause a live event.
    for (let i = 0; i < 200 && seen.length < all.length; i++) await new Promise((r) => setTimeout(r, 50));
    expect(seen.length).toBe(all.length);
    await client.exec.run(id, "echo live");
    await follow;
    expect(seen.at(-1)).toMatchObject({ type: "exec", data: { command: "echo live", exit_code: 0 } });
  });

  it("pauses and resumes", async () => {
    const paused = await client.sandboxes.pause(id);
    expect(paused.status).toBe("paused");
    expect(paused.paused_at).toBeTruthy();
    expect((await client.sandboxes.pause(id)).status).toBe("paused");
    const blocked = await rejectsWith(client.exec.run(id, "true"), OrkestrError);
    expect([blocked.status, blocked.code]).toEqual([409, "sandbox_paused"]);
    const m = await client.sandboxes.metrics(id);
    expect(m.sandbox_status).toBe("paused");
    expect(m.cpu?.usage_percent).toBeNull();
    expect(m.samples).toEqual([]);
    const resumed = await client.sandboxes.resume(id, { timeout_seconds: 600 });
    expect(resumed.status).toBe("running");
    expect((await rejectsWith(client.sandboxes.resume(id), OrkestrError)).code).toBe("sandbox_not_paused");
    expect((await client.exec.run(id, "echo back")).stdout).toBe("back\n");
  });

  it("sets the countdown and patches the sandbox", async () => {
    const before = Date.now();
    const t = await client.sandboxes.setTimeout(id, 900);
    expect(t).toMatchObject({ id, timeout_seconds: 900 });
    const expires = Date.parse(String(t.expires_at));
    expect(expires).toBeGreaterThanOrEqual(before + 899_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 901_000);
    const patched = await client.sandboxes.update(id, { metadata: { suite: "client-integration", step: "patched" } });
    expect(patched.metadata).toEqual({ suite: "client-integration", step: "patched" });
    const tooShort = await rejectsWith(client.sandboxes.setTimeout(id, 5), OrkestrError);
    expect(tooShort.code).toBe("validation_error");
    expect(tooShort.fieldErrors).toHaveProperty("timeout_seconds");
  });

  it("drives a terminal session's REST side", async () => {
    const s = await client.pty.open(id, { cols: 90, rows: 20, command: "/bin/sh" });
    expect(s.status).toBe("running");
    expect((await client.pty.list(id)).map((p) => p.id)).toContain(s.id);
    expect(await client.pty.resize(id, s.id, { cols: 100, rows: 30 })).toMatchObject({ cols: 100, rows: 30 });
    expect((await client.pty.signal(id, s.id, "SIGINT")).signal).toBeTruthy();
    expect(client.pty.wsUrl(id, s.id)).toBe(`${e.origin.replace(/^http/, "ws")}/v1/sandboxes/${id}/pty/${s.id}/ws`);
    await client.pty.close(id, s.id);
    expect((await rejectsWith(client.pty.get(id, "nope"), OrkestrError)).status).toBe(404);
  });

  it("terminates, idempotently", async () => {
    await client.sandboxes.terminate(id);
    await client.sandboxes.terminate(id);
    const s = await client.sandboxes.get(id);
    expect(s.status).toBe("terminated");
    expect(s.terminated_at).toBeTruthy();
    const after = await rejectsWith(client.exec.run(id, "true"), OrkestrError);
    expect(after.code).toBe("sandbox_terminated");
    expect(after.status).toBe(410);
  });
});

describe("the rest of the contract, parsed by the typed client", () => {
  it("snapshots a running sandbox, forks a child from it, lists, gets and deletes", async () => {
    const src = await client.sandboxes.create({ template: "python-3.12" });
    await client.files.write(src.id, "/workspace/fork.txt", "from the source\n");
    const name = `client-it-${Date.now()}`;
    const snap = await client.snapshots.create(src.id, { name });
    expect(snap).toMatchObject({ name, sandbox_id: src.id, status: "ready" });
    expect((await client.snapshots.get(name)).id).toBe(snap.id);
    expect((await client.snapshots.list({ sandbox_id: src.id })).items.map((s) => s.id)).toEqual([snap.id]);
    const child = await client.sandboxes.create({ snapshot: snap.id });
    expect(child.snapshot).toBe(snap.id);
    expect((await client.exec.run(child.id, "cat /workspace/fork.txt")).stdout).toBe("from the source\n");
    await Promise.all([client.sandboxes.terminate(child.id), client.sandboxes.terminate(src.id)]);
    await client.snapshots.delete(snap.id);
    expect((await rejectsWith(client.snapshots.get(snap.id), OrkestrError)).code).toBe("snapshot_not_found");
  });

  it("creates, updates, moves and deletes a volume", async () => {
    const vol = await client.volumes.create({ name: `client-it-${Date.now()}`, size_gb: 1, region: "fsn1" });
    expect(vol).toMatchObject({ size_gb: 1, region: "fsn1" });
    expect((await client.volumes.update(vol.id, { max_lifetime_days: 3 })).max_lifetime_days).toBe(3);
    expect((await client.volumes.move(vol.id, "hel1")).status).toBe("moving");
    let moved = await client.volumes.get(vol.id);
    for (let i = 0; i < 100 && moved.status === "moving"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      moved = await client.volumes.get(vol.id);
    }
    expect(moved).toMatchObject({ status: "available", region: "hel1" });
    expect((await client.volumes.list()).items.map((v) => v.id)).toContain(vol.id);
    await client.volumes.delete(vol.id);
    expect((await rejectsWith(client.volumes.get(vol.id), OrkestrError)).code).toBe("volume_not_found");
  });

  it("builds a template and reads its paged logs", async () => {
    const tpl = await client.templates.create({
      name: `client-it-${Date.now()}`,
      base_image: "debian-12",
      steps: ["echo built-by-client"],
    });
    let got = await client.templates.get(tpl.id);
    for (let i = 0; i < 300 && got.status !== "ready" && got.status !== "failed"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      got = await client.templates.get(tpl.id);
    }
    expect(got.status).toBe("ready");
    const logs = await client.templates.logs(tpl.id);
    expect(logs.lines.map((l) => l.data).join("")).toContain("built-by-client");
    const final = (await collect(client.templates.followLogs(tpl.id))).at(-1);
    expect(final).toMatchObject({ type: "final", status: "ready" });
    await client.templates.delete(tpl.id);
  });

  it("manages a webhook: secret once, disable, rotate, test, deliveries", async () => {
    const hook = await client.webhooks.create({ url: "http://127.0.0.1:9/hook", event_types: ["sandbox.created"] });
    expect(hook.secret).toMatch(/^whsec_/);
    const listed = (await client.webhooks.list()).items.find((w) => w.id === hook.id);
    expect(listed?.secret ?? null).toBeNull();
    expect((await client.webhooks.disable(hook.id)).enabled).toBe(false);
    expect((await client.webhooks.enable(hook.id)).enabled).toBe(true);
    const rotated = await client.webhooks.rotateSecret(hook.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(hook.secret);
    await client.webhooks.test(hook.id);
    expect((await client.webhooks.deliveries(hook.id)).items.length).toBeGreaterThan(0);
    await client.webhooks.delete(hook.id);
    expect((await rejectsWith(client.webhooks.get(hook.id), OrkestrError)).code).toBe("webhook_not_found");
  });

  it("describes a preview and refuses one on an offline sandbox", async () => {
    const net = await client.sandboxes.create({ template: "python-3.12", network: "restricted", preview_auth: true });
    expect(net.preview_host_base).toBeTruthy();
    const p = await client.previews.get(net.id, 8000);
    expect(p).toMatchObject({ port: 8000, auth_required: true });
    expect(client.previews.hostFor(net, 8000)).toBe(p.host);
    expect((await client.previews.rotateToken(net.id)).preview_auth_token).toBeTruthy();
    const off = await client.sandboxes.create({ template: "python-3.12" });
    expect((await rejectsWith(client.previews.get(off.id, 8000), OrkestrError)).code).toBe("network_off");
    await Promise.all([client.sandboxes.terminate(net.id), client.sandboxes.terminate(off.id)]);
  });

  it("reads usage by day", async () => {
    const usage = await client.sandboxes.usage({ granularity: "day" });
    expect(usage.currency).toBe("EUR");
    expect(usage.series?.length).toBeGreaterThan(0);
    // The sandboxes this file created and ran are metered.
    expect(usage.by_sandbox?.length).toBeGreaterThan(0);
  });
});

describe("errors and faults from a real server", () => {
  it("retries a create through an injected 503 fleet_full, with the same Idempotency-Key", async () => {
    await injectFault(e, {
      kind: "fleet_full",
      path: "^/v1/sandboxes$",
      method: "POST",
      retry_after_seconds: 1,
      count: 1,
    });
    const before = callsTo("POST", /^\/v1\/sandboxes$/).length;
    const started = Date.now();
    const sbx = await client.sandboxes.create({ template: "python-3.12" });
    expect(sbx.status).toBe("running");
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    const posts = callsTo("POST", /^\/v1\/sandboxes$/).slice(before);
    expect(posts).toHaveLength(2);
    expect(posts[0]!.headers.get("idempotency-key")).toBeTruthy();
    expect(posts[1]!.headers.get("idempotency-key")).toBe(posts[0]!.headers.get("idempotency-key"));
    expect(await activeFaults(e)).toEqual([]);
    await client.sandboxes.terminate(sbx.id);
  });

  it("gives up on fleet_full when Retry-After exceeds the budget, and says when to retry", async () => {
    await injectFault(e, {
      kind: "fleet_full",
      path: "^/v1/sandboxes$",
      method: "POST",
      retry_after_seconds: 30,
      count: 1,
    });
    const c = createOrkestrClient({ baseUrl: e.url, token: e.token, retryMaxSeconds: 5 });
    const err = await rejectsWith(c.sandboxes.create({ template: "python-3.12" }), OrkestrError);
    expect([err.status, err.code, err.retryAfterSeconds]).toEqual([503, "fleet_full", 30]);
    expect(err.message).toMatch(/try again in 30 s/);
  });

  it("replays a create with a repeated Idempotency-Key instead of making a second sandbox", async () => {
    const a = await client.sandboxes.create({ template: "python-3.12" }, { idempotencyKey: "client-it-1" });
    const b = await client.sandboxes.create({ template: "python-3.12" }, { idempotencyKey: "client-it-1" });
    expect(b.id).toBe(a.id);
    await client.sandboxes.terminate(a.id);
  });

  it("retries GETs through an injected 500 and a connection reset", async () => {
    await injectFault(e, { kind: "error", path: "^/v1/sandboxes/limits$", method: "GET", status: 500, count: 1 });
    await injectFault(e, { kind: "reset", path: "^/v1/base-images$", method: "GET", count: 1 });
    expect((await client.sandboxes.limits()).plan).toBe("payg");
    expect((await client.baseImages.list()).length).toBeGreaterThan(0);
    expect(await activeFaults(e)).toEqual([]);
  });

  it("times out on a slow answer", async () => {
    await injectFault(e, { kind: "latency", path: "^/v1/sandboxes/limits$", latency_ms: 1500, count: 1 });
    const c = createOrkestrClient({ baseUrl: e.url, token: e.token, timeoutMs: 300, maxRetries: 0 });
    const err = await rejectsWith(c.sandboxes.limits(), OrkestrError);
    expect(err).toBeInstanceOf(OrkestrTimeoutError);
    expect(err.message).toBe(`The orkestr API at ${e.url} did not answer within 300 ms. Check the URL or try again.`);
  });

  it("maps auth, scope, not-found and validation errors", async () => {
    const bad = createOrkestrClient({ baseUrl: e.url, token: "ork_not_a_real_token" });
    const unauth = await rejectsWith(bad.sandboxes.limits(), OrkestrError);
    expect([unauth.status, unauth.code]).toEqual([401, "unauthorized"]);

    const readOnly = createOrkestrClient({ baseUrl: e.url, token: await e.mint(["sandboxes:read"]) });
    expect((await readOnly.sandboxes.limits()).plan).toBe("payg");
    const scope = await rejectsWith(readOnly.sandboxes.create({ template: "python-3.12" }), OrkestrError);
    expect([scope.status, scope.code]).toEqual([403, "insufficient_scope"]);

    const missing = await rejectsWith(client.sandboxes.get("sbx_does_not_exist"), OrkestrError);
    expect([missing.status, missing.code]).toEqual([404, "sandbox_not_found"]);

    const invalid = await rejectsWith(
      client.sandboxes.create({ template: "python-3.12", timeout_seconds: 5 }),
      OrkestrError,
    );
    expect([invalid.status, invalid.code]).toEqual([422, "validation_error"]);
    expect(Array.isArray(invalid.raw)).toBe(true);
    expect(invalid.detail).toMatch(/^Invalid request: timeout_seconds: /);

    const unknownTemplate = await rejectsWith(client.sandboxes.create({ template: "cobol-85" }), OrkestrError);
    expect([unknownTemplate.status, unknownTemplate.code]).toEqual([404, "template_not_found"]);
  });

  it("reports an unreachable server clearly", async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, "127.0.0.1", () => {
        const p = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(p));
      });
    });
    const dead = createOrkestrClient({ baseUrl: `http://127.0.0.1:${port}`, token: "x", maxRetries: 0 });
    const err = await rejectsWith(dead.sandboxes.limits(), OrkestrError);
    expect(err).toBeInstanceOf(OrkestrConnectionError);
    expect(err.status).toBe(0);
    expect(err.message).toBe(
      `Could not reach the orkestr API at http://127.0.0.1:${port}/v1 (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${port}). Check the URL and that the server is running, then try again.`,
    );
  });
});
