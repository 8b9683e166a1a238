import { describe, expect, it } from "vitest";
import { readExecChunk } from "./stream";
import {
  ApiErrorBody,
  BaseImage,
  CreateSandboxBody,
  DirectoryListing,
  ExecChunk,
  ExecResult,
  FileContent,
  Limits,
  Metrics,
  PresignedUrl,
  PtySession,
  Sandbox,
  SandboxEvent,
  SetTimeoutResult,
  Snapshot,
  Template,
  TemplateLogLine,
  TemplateLogs,
  toDate,
  Usage,
  Volume,
  Webhook,
  WebhookDelivery,
  type SandboxStatus,
} from "./schemas/index";
import * as ex from "./testing/contract-examples";

describe("tolerant reading of the contract examples", () => {
  it.each([
    ["Sandbox", Sandbox, ex.SANDBOX],
    ["ExecResult", ExecResult, ex.EXEC_RESULT],
    ["FileContent", FileContent, ex.FILE_READ],
    ["DirectoryListing", DirectoryListing, ex.DIR_READ],
    ["PresignedUrl", PresignedUrl, ex.PRESIGN_UPLOAD],
    ["Metrics", Metrics, ex.METRICS],
    ["Metrics (paused)", Metrics, ex.METRICS_PAUSED],
    ["SetTimeoutResult", SetTimeoutResult, ex.SET_TIMEOUT],
    ["Snapshot", Snapshot, ex.SNAPSHOT],
    ["Volume", Volume, ex.VOLUME],
    ["Template", Template, ex.TEMPLATE],
    ["TemplateLogs", TemplateLogs, ex.TEMPLATE_LOGS],
    ["Webhook", Webhook, ex.WEBHOOK_CREATED],
    ["WebhookDelivery", WebhookDelivery, ex.DELIVERY],
    ["Limits", Limits, ex.LIMITS],
    ["Usage", Usage, ex.USAGE],
    ["ApiErrorBody", ApiErrorBody, ex.VALIDATION_ERROR],
  ] as const)("%s", (_name, schema, example) => {
    const r = schema.safeParse(example);
    expect(r.success ? null : r.error.issues).toBeNull();
  });

  it("events and base images", () => {
    for (const e of ex.EVENTS) expect(SandboxEvent.parse(e).type).toBe(e.type);
    for (const b of ex.BASE_IMAGES) expect(BaseImage.parse(b).id).toBe(b.id);
  });
});

describe("Sandbox", () => {
  it("keeps an unknown status as its string", () => {
    const s = Sandbox.parse({ id: "sbx_1", status: "hibernating" });
    const status: SandboxStatus = s.status;
    expect(status).toBe("hibernating");
  });

  it("passes unknown fields through", () => {
    const s = Sandbox.parse({ ...ex.SANDBOX, gpu: "none", labels: { a: 1 } });
    expect((s as Record<string, unknown>).gpu).toBe("none");
    expect((s as Record<string, unknown>).labels).toEqual({ a: 1 });
  });

  it("accepts the minimum, numbers as timestamps, and volume as a name or an object", () => {
    expect(Sandbox.parse({ id: "sbx_1", status: "running" }).template).toBeUndefined();
    expect(Sandbox.parse({ id: "sbx_1", status: "running", created_at: 1717243200 }).created_at).toBe(1717243200);
    expect(Sandbox.parse({ id: "sbx_1", status: "running", volume: "my-cache" }).volume).toBe("my-cache");
    expect(
      Sandbox.parse({ id: "sbx_1", status: "running", volume: { id: "vol_1", mount_path: "/persist" } }).volume,
    ).toEqual({ id: "vol_1", mount_path: "/persist" });
    expect(Sandbox.parse({ id: "sbx_1", status: "running", cpu: "2", memory_mb: "4096" })).toMatchObject({
      cpu: 2,
      memory_mb: 4096,
    });
  });

  it("still refuses what is not a sandbox", () => {
    expect(Sandbox.safeParse({ status: "running" }).success).toBe(false);
    expect(Sandbox.safeParse({ id: 1, status: "running" }).success).toBe(false);
    expect(Sandbox.safeParse("sbx_1").success).toBe(false);
  });
});

describe("other tolerant readings", () => {
  it("Metrics: sample times as ISO strings or unix seconds, null usage, missing samples", () => {
    const m = Metrics.parse({ ...ex.METRICS, samples: [{ t: 1717243205, cpu_percent: 1, mem_bytes: 2 }] });
    expect(toDate(m.samples[0]!.t)?.toISOString()).toBe("2024-06-01T12:00:05.000Z");
    expect(
      Metrics.parse({ sandbox_status: "terminated", lifetime: { cpu_seconds: 1, gb_seconds: 2 } }).samples,
    ).toEqual([]);
  });

  it("ExecResult fills what a server left out", () => {
    expect(ExecResult.parse({ exit_code: 1 })).toMatchObject({ stdout: "", stderr: "", exit_code: 1 });
    expect(ExecResult.parse({ stdout: "x" }).exit_code).toBeNull();
  });

  it("Template error as object or string; log lines without data", () => {
    expect(Template.parse({ ...ex.TEMPLATE, status: "failed", error: ex.TEMPLATE_FAILED_ERROR }).error).toMatchObject({
      exit_code: 100,
    });
    expect(Template.parse({ id: "tmpl_1", error: "boom" }).error).toBe("boom");
    expect(TemplateLogLine.parse({ seq: 1 }).data).toBe("");
  });

  it("Limits accepts the engine's extra fields and unprefixed names", () => {
    const l = Limits.parse({
      plan: "payg",
      regions: ["fsn1"],
      max_timeout_seconds: 86400,
      capabilities: { pty: { transport: "websocket" } },
      isolation: { mode: "bwrap" },
    });
    expect(l.capabilities).toEqual({ pty: { transport: "websocket" } });
    expect((l as Record<string, unknown>).isolation).toEqual({ mode: "bwrap" });
  });

  it("SandboxEvent accepts created_at instead of t and no data", () => {
    expect(SandboxEvent.parse({ type: "sandbox.paused", created_at: "2025-06-01T12:00:00Z" }).data).toEqual({});
  });

  it("PtySession as the engine sends it", () => {
    const p = PtySession.parse({
      id: "pty_1",
      sandbox_id: "sbx_1",
      status: "running",
      command: "/bin/bash -l",
      cwd: "/workspace",
      cols: 80,
      rows: 24,
      viewers: 0,
      ws_path: "/v1/sandboxes/sbx_1/pty/pty_1/ws",
      created_at: "2025-06-01T12:00:00Z",
      exited_at: null,
      exit_code: null,
      signal: null,
    });
    expect(p.ws_path).toMatch(/\/ws$/);
  });

  it("ApiErrorBody accepts string, array, object and foreign shapes", () => {
    for (const body of [
      { detail: "x", code: "y" },
      ex.VALIDATION_ERROR,
      { detail: { msg: "x" } },
      { code: 409, message: "m" },
      { error: { code: "c" } },
      {},
    ]) {
      expect(ApiErrorBody.safeParse(body).success).toBe(true);
    }
  });
});

describe("request bodies are strict-ish", () => {
  it("CreateSandboxBody needs a template or a snapshot", () => {
    expect(
      CreateSandboxBody.safeParse({
        template: "python-3.12",
        size: "small",
        network: "restricted",
        allow_domains: ["api.example.com"],
      }).success,
    ).toBe(true);
    expect(CreateSandboxBody.safeParse({ snapshot: "snap_1" }).success).toBe(true);
    expect(CreateSandboxBody.safeParse({}).success).toBe(false);
    expect(CreateSandboxBody.safeParse({ template: "python-3.12", size: "huge" }).success).toBe(false);
    expect(CreateSandboxBody.safeParse({ template: "python-3.12", timeout_seconds: 5 }).success).toBe(false);
    expect(CreateSandboxBody.safeParse({ template: "python-3.12", allow_domains: ["a.example"] }).success).toBe(false);
    expect(CreateSandboxBody.safeParse({ template: "python-3.12", env: { "1BAD": "x" } }).success).toBe(false);
  });
});

describe("toDate", () => {
  it("reads ISO strings, unix seconds and milliseconds", () => {
    expect(toDate("2025-06-01T12:00:00Z")?.toISOString()).toBe("2025-06-01T12:00:00.000Z");
    expect(toDate(1748779200)?.toISOString()).toBe("2025-06-01T12:00:00.000Z");
    expect(toDate(1748779200000)?.toISOString()).toBe("2025-06-01T12:00:00.000Z");
    expect(toDate("1748779200")?.toISOString()).toBe("2025-06-01T12:00:00.000Z");
    expect(toDate("yesterday")).toBeNull();
    expect(toDate(null)).toBeNull();
  });
});

describe("readExecChunk (the zod-free frame reader the browser core shares)", () => {
  const frames: unknown[] = [
    { stream: "stdout", data: "hi\n" },
    { stream: "stderr", data: "ZXJy", encoding: "base64" },
    { is_final: true, exit_code: 0, duration_ms: 12 },
    { is_final: true, exit_code: 0, duration_ms: "12.5" },
    { is_final: true, error: "agent gone", code: "sandbox_agent_unreachable" },
    { stdout: "a", stderr: null, finished: true, extra: { kept: 1 } },
    { stream: 1, data: "x" },
    { exit_code: 1.5 },
    { is_final: "yes" },
    { duration_ms: "soon" },
    [1, 2],
    "text",
    null,
  ];
  it.each(frames.map((f) => [JSON.stringify(f), f]))("agrees with ExecChunk on %s", (_name, frame) => {
    const zod = ExecChunk.safeParse(frame);
    expect(readExecChunk(frame)).toEqual(zod.success ? zod.data : null);
  });
});
