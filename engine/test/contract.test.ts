import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, target, type EngineHandle } from "./helpers/engine.js";

/**
 * The orkestr v1 contract over HTTP. Runs against the local engine in CI, or against any v1 server
 * with ORKESTR_API_URL and ORKESTR_API_KEY set (then engine-only checks are skipped).
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

async function sandbox(body: Record<string, unknown> = {}): Promise<string> {
  const id = await createSandbox(e, body);
  created.push(id);
  return id;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe("auth and errors", () => {
  it("401 unauthorized with WWW-Authenticate when the token is missing or unknown", async () => {
    for (const token of [null, "ork_not-a-real-token"]) {
      const r = await e.api("GET", "/sandboxes", undefined, { token });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ code: "unauthorized" });
      expect(typeof r.body.detail).toBe("string");
      expect(r.headers.get("www-authenticate")).toMatch(/Bearer/i);
    }
  });

  it.runIf(!process.env.ORKESTR_API_URL)(
    "403 insufficient_scope for a read-only token on a mutation, reads allowed",
    async () => {
      const ro = await e.mint(["sandboxes:read"]);
      expect((await e.api("GET", "/sandboxes", undefined, { token: ro })).status).toBe(200);
      const r = await e.api("POST", "/sandboxes", { template: "python-3.12" }, { token: ro });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe("insufficient_scope");
      const wo = await e.mint(["sandboxes:write"]);
      expect((await e.api("GET", "/sandboxes", undefined, { token: wo })).body.code).toBe("insufficient_scope");
    },
  );

  it("404 sandbox_not_found for unknown ids", async () => {
    const r = await e.api("GET", "/sandboxes/sbx_00000000000000000000000000");
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("sandbox_not_found");
  });

  it("bad input is a 4xx with {detail, code}, never a 5xx", async () => {
    const cases: [unknown, number, string][] = [
      [{}, 422, "validation_error"],
      [{ template: 42 }, 422, "validation_error"],
      [{ template: "python-3.12", size: "huge" }, 422, "validation_error"],
      [{ template: "python-3.12", network: "sideways" }, 422, "validation_error"],
      [{ template: "python-3.12", timeout_seconds: 1 }, 422, "validation_error"],
      [{ template: "python-3.12", timeout_seconds: "ten" }, 422, "validation_error"],
      [{ template: "python-3.12", env: { "BAD-NAME": "x" } }, 422, "validation_error"],
      [{ template: "python-3.12", network: "off", allow_domains: ["x.test"] }, 422, "validation_error"],
      [{ template: "no-such-template" }, 404, "template_not_found"],
      [{ template: "python-3.12", region: "mars1" }, 400, "region_unavailable"],
      ["{not json", 400, "bad_request"],
      [[1, 2, 3], 422, "validation_error"],
    ];
    for (const [body, status, code] of cases) {
      const r = await e.api("POST", "/sandboxes", body);
      expect({ body, status: r.status, code: r.body?.code }).toEqual({ body, status, code });
      expect(r.body.detail).toBeTruthy();
    }
    const fastapi = await e.api("POST", "/sandboxes", { template: 42 });
    expect(Array.isArray(fastapi.body.detail)).toBe(true);
    expect(fastapi.body.detail[0].loc).toEqual(["body", "template"]);
  });

  it("an oversized body is 413 payload_too_large", async () => {
    const r = await e.api(
      "POST",
      "/sandboxes",
      JSON.stringify({ template: "python-3.12", metadata: { big: "x".repeat(50 * 1024 * 1024) } }),
    );
    expect(r.status).toBe(413);
    expect(r.body.code).toBe("payload_too_large");
  });
});

describe("sandboxes", () => {
  it("creates a running sandbox with the contract's fields, and never echoes env values", async () => {
    const r = await e.api("POST", "/sandboxes", {
      template: "python-3.12",
      size: "small",
      env: { SECRET_KEY: "s3cr3t-value" },
      metadata: { agent_run: "r_42" },
      timeout_seconds: 600,
    });
    expect(r.status).toBe(201);
    created.push(r.body.id);
    const s = r.body;
    expect(s.id).toMatch(/^sbx_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(s).toMatchObject({
      status: "running",
      template: "python-3.12",
      size: "small",
      cpu: 1,
      memory_mb: 1024,
      network: "off",
      metadata: { agent_run: "r_42" },
      env_keys: ["SECRET_KEY"],
      timeout_seconds: 600,
      on_timeout: "kill",
      auto_resume: false,
    });
    expect(r.text).not.toContain("s3cr3t-value");
    for (const k of ["created_at", "started_at", "expires_at"]) expect(s[k]).toMatch(ISO);
    expect(s.paused_at).toBeNull();
    const ttl = Date.parse(s.expires_at) - Date.parse(s.started_at);
    expect(ttl).toBeGreaterThan(599_000);
    expect(ttl).toBeLessThan(601_000);
    const out = await exec(e, s.id, "echo $SECRET_KEY");
    expect(out.stdout).toBe("s3cr3t-value\n");
    const got = await e.api("GET", `/sandboxes/${s.id}`);
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(s.id);
  });

  it("accepts the first-generation cpu/memory_mb fields", async () => {
    const id = await sandbox({ cpu: 1, memory_mb: 512 });
    const s = (await e.api("GET", `/sandboxes/${id}`)).body;
    expect(s).toMatchObject({ cpu: 1, memory_mb: 512 });
  });

  it("lists newest first with metadata and status filters and cursor paging", async () => {
    const tag = `t${Date.now()}`;
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await sandbox({ metadata: { suite: tag, n: String(i) } }));
    const all = await e.api("GET", `/sandboxes?metadata[suite]=${tag}&status=running`);
    expect(all.status).toBe(200);
    expect(Array.isArray(all.body)).toBe(true);
    expect(all.body.map((s: { id: string }) => s.id)).toEqual([...ids].reverse());
    const one = await e.api("GET", `/sandboxes?metadata[suite]=${tag}&metadata[n]=1`);
    expect(one.body.map((s: { id: string }) => s.id)).toEqual([ids[1]]);
    const page1 = await e.api("GET", `/sandboxes?metadata[suite]=${tag}&limit=2`);
    expect(page1.body).toHaveLength(2);
    const cursor = page1.headers.get("x-next-cursor");
    expect(cursor).toBeTruthy();
    const page2 = await e.api("GET", `/sandboxes?metadata[suite]=${tag}&limit=2&cursor=${cursor}`);
    expect(page2.body.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
    expect(page2.headers.get("x-next-cursor")).toBeNull();
    expect((await e.api("GET", "/sandboxes?status=bogus")).status).toBe(422);
    expect((await e.api("GET", "/sandboxes?limit=1000")).status).toBe(422);
  });

  it("terminate is 204, idempotent, hides the sandbox from default lists and answers 410 afterwards", async () => {
    const id = await sandbox();
    expect((await e.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
    expect((await e.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
    const s = (await e.api("GET", `/sandboxes/${id}`)).body;
    expect(s.status).toBe("terminated");
    expect(s.terminated_at).toMatch(ISO);
    const listed = (await e.api("GET", "/sandboxes")).body.map((x: { id: string }) => x.id);
    expect(listed).not.toContain(id);
    const gone = (await e.api("GET", "/sandboxes?status=terminated")).body.map((x: { id: string }) => x.id);
    expect(gone).toContain(id);
    const r = await e.api("POST", `/sandboxes/${id}/exec`, { command: "true" });
    expect(r.status).toBe(410);
    expect(r.body.code).toBe("sandbox_terminated");
  });
});

describe("exec", () => {
  let id: string;
  beforeAll(async () => {
    id = await sandbox();
  });

  it("returns stdout, stderr, exit_code and duration_ms; a non-zero exit is a 200", async () => {
    const r = await exec(e, id, "echo out; echo err >&2; exit 7");
    expect(r).toMatchObject({ stdout: "out\n", stderr: "err\n", exit_code: 7, timed_out: false, truncated: false });
    expect(r.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("runs the seed's quick start: python writes and computes", async () => {
    const w = await exec(
      e,
      id,
      "printf 'print(sum(range(1_000_000)))' > /workspace/main.py && python /workspace/main.py",
    );
    expect(w.stdout).toBe("499999500000\n");
  });

  it("honours cwd, env and stdin", async () => {
    expect((await exec(e, id, "pwd", { cwd: "/tmp" })).stdout).toBe("/tmp\n");
    expect((await exec(e, id, "echo $FOO", { env: { FOO: "bar" } })).stdout).toBe("bar\n");
    expect((await exec(e, id, "cat", { stdin: "from stdin" })).stdout).toBe("from stdin");
    expect((await exec(e, id, "true", { cwd: "/nope" })).exit_code).not.toBe(0);
  });

  it("kills a command at its timeout: exit 124, timed_out", async () => {
    const r = await exec(e, id, "sleep 30", { timeout_seconds: 0.5 });
    expect(r).toMatchObject({ exit_code: 124, timed_out: true });
    expect(r.duration_ms).toBeLessThan(5000);
  });

  it("caps output at 1 MiB per stream with truncated", async () => {
    const r = await exec(e, id, "head -c 3000000 /dev/zero | tr '\\0' a");
    expect(r.truncated).toBe(true);
    expect(r.stdout.length).toBe(1024 * 1024);
  });

  it("does not wait for background children holding the pipes", async () => {
    const t0 = Date.now();
    const r = await exec(e, id, "sleep 20 & echo started");
    expect(r.stdout).toBe("started\n");
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it("streams SSE chunks then a final frame", async () => {
    const res = await fetch(`${e.url}/sandboxes/${id}/exec/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${e.token}`, "content-type": "application/json" },
      body: JSON.stringify({ command: "echo one; echo two >&2; exit 4" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const frames = parseFrames(await res.text());
    expect(
      frames
        .filter((f) => f.stream === "stdout")
        .map((f) => f.data)
        .join(""),
    ).toBe("one\n");
    expect(
      frames
        .filter((f) => f.stream === "stderr")
        .map((f) => f.data)
        .join(""),
    ).toBe("two\n");
    const last = frames[frames.length - 1]!;
    expect(last).toMatchObject({ is_final: true, exit_code: 4 });
    expect(typeof last.duration_ms).toBe("number");
  });

  it("streams NDJSON when asked, and /exec with stream:true streams too", async () => {
    const res = await fetch(`${e.url}/sandboxes/${id}/exec/stream`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${e.token}`,
        "content-type": "application/json",
        accept: "application/x-ndjson",
      },
      body: JSON.stringify({ command: "echo nd" }),
    });
    expect(res.headers.get("content-type")).toMatch(/application\/x-ndjson/);
    const lines = (await res.text())
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines[0]).toEqual({ stream: "stdout", data: "nd\n" });
    expect(lines[lines.length - 1]).toMatchObject({ is_final: true, exit_code: 0 });
    const viaExec = await fetch(`${e.url}/sandboxes/${id}/exec`, {
      method: "POST",
      headers: { authorization: `Bearer ${e.token}`, "content-type": "application/json" },
      body: JSON.stringify({ command: "echo s", stream: true }),
    });
    expect(parseFrames(await viaExec.text()).at(-1)).toMatchObject({ is_final: true, exit_code: 0 });
  });

  it("errors before the stream starts are plain JSON errors", async () => {
    const r = await e.api("POST", "/sandboxes/sbx_00000000000000000000000000/exec/stream", { command: "true" });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("sandbox_not_found");
  });
});

describe("lifecycle", () => {
  it("pause freezes, resume thaws; paused exec is 409 sandbox_paused", async () => {
    const id = await sandbox();
    // tmp + mv: a reader never sees the counter file half-written.
    await exec(
      e,
      id,
      "nohup sh -c 'i=0; while :; do i=$((i+1)); echo $i > /tmp/counter.new; mv /tmp/counter.new /tmp/counter; sleep 0.05; done' >/dev/null 2>&1 &",
    );
    await new Promise((r) => setTimeout(r, 300));
    const p = await e.api("POST", `/sandboxes/${id}/pause`);
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ id, status: "paused" });
    expect(p.body.paused_at).toMatch(ISO);
    expect((await e.api("POST", `/sandboxes/${id}/pause`)).status).toBe(200);
    const x = await e.api("POST", `/sandboxes/${id}/exec`, { command: "true" });
    expect(x.status).toBe(409);
    expect(x.body.code).toBe("sandbox_paused");
    const m = await e.api("GET", `/sandboxes/${id}/metrics`);
    // Seed: paused → null live usage and an empty window; lifetime stays.
    expect(m.body).toMatchObject({
      sandbox_status: "paused",
      cpu: { usage_percent: null, usage_cores: null },
      memory: { usage_bytes: null },
      samples: [],
    });
    expect(m.body.lifetime.cpu_seconds).toBeGreaterThan(0);
    const r = await e.api("POST", `/sandboxes/${id}/resume`, { timeout_seconds: 120 });
    expect([200, 201]).toContain(r.status);
    expect(r.body).toMatchObject({ status: "running", paused_at: null, timeout_seconds: 120 });
    const a = Number((await exec(e, id, "cat /tmp/counter")).stdout);
    await new Promise((res) => setTimeout(res, 400));
    const b = Number((await exec(e, id, "cat /tmp/counter")).stdout);
    expect(b).toBeGreaterThan(a);
    const again = await e.api("POST", `/sandboxes/${id}/resume`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("sandbox_not_paused");
  });

  it("set_timeout resets the countdown; PATCH is an alias and edits metadata", async () => {
    const id = await sandbox({ timeout_seconds: 60 });
    const t = await e.api("POST", `/sandboxes/${id}/timeout`, { timeout_seconds: 900 });
    expect(t.status).toBe(200);
    expect(t.body).toMatchObject({ id, timeout_seconds: 900 });
    expect(Math.abs(Date.parse(t.body.expires_at) - (Date.now() + 900_000))).toBeLessThan(5000);
    const p = await e.api("PATCH", `/sandboxes/${id}`, {
      timeout_seconds: 120,
      metadata: { owner: "ci" },
      on_timeout: "pause",
      auto_resume: true,
    });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({
      timeout_seconds: 120,
      metadata: { owner: "ci" },
      on_timeout: "pause",
      auto_resume: true,
    });
    expect((await e.api("POST", `/sandboxes/${id}/timeout`, { timeout_seconds: 5 })).status).toBe(422);
  });

  it("auto_resume wakes a paused sandbox on exec", async () => {
    const id = await sandbox({ auto_resume: true });
    await e.api("POST", `/sandboxes/${id}/pause`);
    expect((await exec(e, id, "echo awake")).stdout).toBe("awake\n");
    expect((await e.api("GET", `/sandboxes/${id}`)).body.status).toBe("running");
  });

  it("the countdown terminates (kill) or pauses (pause) at expires_at", async () => {
    const killed = await sandbox({ timeout_seconds: 10 });
    const paused = await sandbox({ timeout_seconds: 10, on_timeout: "pause" });
    const deadline = Date.now() + 25_000;
    let k = "",
      p = "";
    while (Date.now() < deadline) {
      k = (await e.api("GET", `/sandboxes/${killed}`)).body.status;
      p = (await e.api("GET", `/sandboxes/${paused}`)).body.status;
      if (k !== "running" && p !== "running") break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(k).toBe("expired");
    expect(p).toBe("paused");
    const ev = (await e.api("GET", `/sandboxes/${paused}/events?type=sandbox.expired`)).body;
    expect(ev[0]).toMatchObject({ type: "sandbox.expired", data: { action: "paused" } });
  }, 40_000);
});

describe("metrics, events, limits, base images", () => {
  it("metrics come from the kernel: CPU rises under load, memory is the working set", async () => {
    const id = await sandbox();
    await exec(e, id, "nohup sh -c 'while :; do :; done' >/dev/null 2>&1 &");
    await exec(e, id, 'python3 -c "import time; b=bytearray(80*1024*1024); time.sleep(30)" >/dev/null 2>&1 &');
    await new Promise((r) => setTimeout(r, 2500));
    const m = (await e.api("GET", `/sandboxes/${id}/metrics`)).body;
    expect(m).toMatchObject({
      sandbox_id: id,
      sandbox_status: "running",
      cpu: { cores: 1 },
      memory: { limit_bytes: 1024 ** 3 },
    });
    expect(m.sample_interval_seconds).toBeGreaterThan(0);
    // A busy loop shows up as CPU use (other test files share these 2 cores, so no exact figure).
    expect(Math.max(...m.samples.map((s: { cpu_percent: number }) => s.cpu_percent))).toBeGreaterThan(30);
    expect(m.cpu.usage_cores).toBeGreaterThan(0.15);
    expect(m.cpu.usage_percent).toBeCloseTo(m.cpu.usage_cores * 100, 0);
    expect(m.memory.usage_bytes).toBeGreaterThan(60 * 1024 * 1024);
    expect(m.lifetime.cpu_seconds).toBeGreaterThan(1);
    expect(m.lifetime.gb_seconds).toBeGreaterThan(0);
    expect(m.samples.length).toBeGreaterThan(1);
    const lastT = m.samples[m.samples.length - 1].t;
    expect(lastT).toMatch(ISO);
    const newer = (await e.api("GET", `/sandboxes/${id}/metrics?since=${encodeURIComponent(lastT)}`)).body;
    for (const s of newer.samples) expect(Date.parse(s.t)).toBeGreaterThan(Date.parse(lastT));
    expect((await e.api("GET", `/sandboxes/${id}/metrics?since=yesterday`)).status).toBe(422);
    await e.api("DELETE", `/sandboxes/${id}`);
    const after = (await e.api("GET", `/sandboxes/${id}/metrics`)).body;
    expect(after.sandbox_status).toBe("terminated");
    expect(after.lifetime.cpu_seconds).toBeGreaterThan(1);
    expect(after.samples).toEqual([]);
  });

  it("records the activity timeline, cursor-paged, and follows it over SSE", async () => {
    const id = await sandbox();
    await exec(e, id, "echo hi");
    await e.api("POST", `/sandboxes/${id}/pause`);
    await e.api("POST", `/sandboxes/${id}/resume`);
    const all = (await e.api("GET", `/sandboxes/${id}/events`)).body;
    expect(all.map((x: { type: string }) => x.type)).toEqual([
      "sandbox.created",
      "exec",
      "sandbox.paused",
      "sandbox.resumed",
    ]);
    expect(all[1].data).toMatchObject({ command: "echo hi", exit_code: 0 });
    expect(all[0].id).toMatch(/^evt_/);
    const p1 = await e.api("GET", `/sandboxes/${id}/events?limit=2`);
    expect(p1.body).toHaveLength(2);
    const p2 = await e.api("GET", `/sandboxes/${id}/events?limit=2&cursor=${p1.headers.get("x-next-cursor")}`);
    expect(p2.body.map((x: { type: string }) => x.type)).toEqual(["sandbox.paused", "sandbox.resumed"]);

    const ac = new AbortController();
    const res = await fetch(`${e.url}/sandboxes/${id}/events?follow=true`, {
      headers: { authorization: `Bearer ${e.token}` },
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    let text = "";
    void exec(e, id, "echo live");
    const until = Date.now() + 10_000;
    while (!text.includes('"command":"echo live"') && Date.now() < until) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    ac.abort();
    const types = parseFrames(text).map((f) => f.type);
    expect(types.slice(0, 4)).toEqual(["sandbox.created", "exec", "sandbox.paused", "sandbox.resumed"]);
    expect(types).toContain("exec");
    expect(text).toContain('"command":"echo live"');
  });

  it("limits describe the plan, the sizes and the isolation this machine enforces", async () => {
    for (const p of ["/sandboxes/limits", "/limits"]) {
      const l = (await e.api("GET", p)).body;
      expect(Array.isArray(l.allowed_sizes)).toBe(true);
      expect(l.sizes.map((s: { size: string }) => s.size)).toEqual(["small", "medium", "large"]);
      expect(l.sizes[0]).toMatchObject({ size: "small", cpu: 1, memory_mb: 1024 });
      expect(l.regions.length).toBeGreaterThan(0);
      expect(l.default_egress_domains.length).toBeGreaterThan(0);
      expect(typeof l.trial_credit_eur).toBe("number");
      if (e.local) {
        expect(l.isolation.mode).toMatch(/^bwrap/);
        expect(l.isolation.enforced.length).toBeGreaterThan(0);
        expect(l.capabilities.pty.transport).toBe("websocket");
      }
    }
  });

  it("base images say what each maps to", async () => {
    const r = await e.api("GET", "/base-images");
    expect(r.status).toBe(200);
    const ids = r.body.map((i: { id: string }) => i.id);
    expect(ids).toEqual(
      expect.arrayContaining(["python-3.12", "python-3.12-bare", "code-interpreter", "node-22", "debian-12"]),
    );
    if (e.local) for (const i of r.body) expect(i.maps_to).toBeTruthy();
  });

  it("every built-in template boots and runs its runtime", async () => {
    const checks: [string, string, RegExp][] = [
      ["python-3.12", "python3 --version", /Python 3\.12/],
      ["python-3.12-bare", "python3 -c 'import sys; print(sys.version_info[:2])'", /\(3, 12\)/],
      ["code-interpreter", "python3 -c 'print(2**10)'", /1024/],
      ["node-22", "node -e 'console.log(process.version)'", /^v\d+/],
      ["debian-12", "cat /etc/debian_version", /^\d+/],
    ];
    for (const [template, cmd, re] of checks) {
      const id = await sandbox({ template });
      const r = await exec(e, id, cmd);
      expect({ template, out: r.stdout }).toEqual({ template, out: expect.stringMatching(re) });
      await e.api("DELETE", `/sandboxes/${id}`);
    }
  });
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- frames are loosely typed JSON
function parseFrames(text: string): Record<string, any>[] {
  // Tolerant frame reader (as a tolerant client reads exec/stream): SSE or NDJSON, comments and blank lines skipped.
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith(":") && !l.startsWith("id:"))
    .map((l) => JSON.parse(l.replace(/^data:\s?/, "")));
}
