import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ApiError } from "../src/errors.js";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";
import { raw, rawRequest, type RawResponse } from "./helpers/raw-http.js";

/**
 * Bad input never makes the engine fail (5xx) and every error, the framework's own included (bad
 * URLs, over-long ids, bad JSON, unknown content types, oversized headers), is the contract's
 * `{detail, code}`. A bounded table of malformed requests runs over every route.
 */
let e: EngineHandle;
let port: number;
/** Running for the specific tests (nothing pauses or deletes it). */
let calm: string;
/** The fuzzed routes' sandbox: they may pause, resume and finally delete it. */
let fuzzed: string;
beforeAll(async () => {
  e = await startEngine();
  port = Number(new URL(e.origin).port);
  [calm, fuzzed] = await Promise.all([createSandbox(e), createSandbox(e)]);
});
afterAll(async () => {
  await e?.stop();
});

const NUL = "\u0000";
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const auth = () => ({ Authorization: `Bearer ${e.token}` });

/** The contract's error shape: a string code and a string (or FastAPI list) detail, as JSON. */
function contractProblem(r: RawResponse): string | null {
  if (r.status >= 500) return `status ${r.status}`;
  if (r.status < 400) return null;
  if (!/^application\/json/.test(r.headers["content-type"] ?? "")) return `content-type ${r.headers["content-type"]}`;
  if (typeof r.json?.code !== "string") return "no string code";
  if (typeof r.json.detail !== "string" && !Array.isArray(r.json.detail)) return "no detail";
  return null;
}

function expectContractError(r: RawResponse, status: number, code: string, what = ""): void {
  expect(r.status, `${what} ${r.text}`).toBe(status);
  expect(contractProblem(r), `${what} ${r.text}`).toBeNull();
  expect(r.json.code, what).toBe(code);
  // No Fastify-style fields next to ours.
  expect(Object.keys(r.json), what).not.toContain("error");
  expect(Object.keys(r.json), what).not.toContain("statusCode");
}

const post = (target: string, body: unknown) =>
  raw(port, "POST", target, {
    headers: { ...auth(), "Content-Type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("specific bad input", () => {
  it("a NUL byte in an exec's command, cwd or env is a 422, not a 500", async () => {
    for (const body of [
      { command: NUL },
      { command: `echo a${NUL}b` },
      { command: "true", cwd: `/work${NUL}space` },
      { command: "true", env: { A: `x${NUL}` } },
    ]) {
      const r = await post(`/v1/sandboxes/${calm}/exec`, body);
      expectContractError(r, 422, "validation_error", JSON.stringify(body));
    }
    // stdin is bytes for the command's pipe: NUL is fine there.
    const ok = await post(`/v1/sandboxes/${calm}/exec`, { command: "od -An -c", stdin: `a${NUL}b` });
    expect(ok.status).toBe(200);
    expect(ok.json.stdout).toMatch(/a\s+\\0\s+b/);
  });

  it("a NUL byte in a sandbox's or a template's env or steps is refused up front", async () => {
    expectContractError(
      await post("/v1/sandboxes", { template: "python-3.12", env: { A: NUL } }),
      422,
      "validation_error",
      "sandbox env",
    );
    expectContractError(
      await post("/v1/templates", { name: "nul-env", base_image: "python-3.12", env: { A: NUL } }),
      422,
      "validation_error",
      "template env",
    );
    expectContractError(
      await post("/v1/templates", { name: "nul-step", base_image: "python-3.12", steps: [`echo ${NUL}`] }),
      422,
      "validation_error",
      "template step",
    );
  });

  it("an over-long id is 414 uri_too_long in the contract shape", async () => {
    for (const target of [
      `/v1/sandboxes/${"a".repeat(101)}`,
      `/v1/sandboxes/${"a".repeat(5000)}/exec`,
      `/v1/webhooks/w/deliveries/${"d".repeat(200)}`,
    ]) {
      expectContractError(
        await raw(port, "GET", target, { headers: auth() }),
        414,
        "uri_too_long",
        target.slice(0, 40),
      );
    }
    // Up to the router's limit an id is the route's to judge: 65-100 characters fail validation.
    expectContractError(
      await raw(port, "GET", `/v1/sandboxes/${"a".repeat(100)}`, { headers: auth() }),
      422,
      "validation_error",
    );
  });

  it("bad percent-encoding in the path is 400 bad_request in the contract shape", async () => {
    for (const target of [
      "/v1/sandboxes/%E0%A4%A",
      "/v1/sandboxes/%",
      "/v1/%zz/x",
      `/v1/sandboxes/${calm}/files/%C0%AF`,
    ]) {
      expectContractError(await raw(port, "GET", target, { headers: auth() }), 400, "bad_request", target);
    }
  });

  it("malformed HTTP (request line, headers) is answered in the contract shape", async () => {
    const huge = await rawRequest(
      port,
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Big: ${"a".repeat(20_000)}`,
    );
    expectContractError(huge, 431, "headers_too_large", "header overflow");
    for (const head of [
      `GET /healthz HTTP/9.9\r\nHost: 127.0.0.1:${port}`,
      `GET /hea lthz HTTP/1.1\r\nHost: 127.0.0.1:${port}`,
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nBad Header: x`,
      `POST /v1/sandboxes HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: abc`,
      `POST /v1/sandboxes HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 1\r\nContent-Length: 2`,
      `POST /v1/sandboxes HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`,
    ]) {
      expectContractError(await rawRequest(port, head), 400, "bad_request", head.split("\r\n")[0]);
    }
  });

  it("a body the parser refuses, a content type it does not know, or too big a body is a 4xx", async () => {
    expectContractError(await post(`/v1/sandboxes/${calm}/exec`, '{"command":'), 400, "bad_request", "bad JSON");
    const typed = await raw(port, "POST", `/v1/sandboxes/${calm}/exec`, {
      headers: { ...auth(), "Content-Type": "application/xml" },
      body: "<command>true</command>",
    });
    expectContractError(typed, 415, "unsupported_media_type", "application/xml");
    const big = await raw(port, "POST", "/v1/sandboxes", {
      headers: { ...auth(), "Content-Type": "application/json" },
      body: `{"a":"${"x".repeat(41 * 1024 * 1024)}"}`,
    });
    expectContractError(big, 413, "payload_too_large", "body limit");
    // The sandbox was never disturbed.
    expect((await exec(e, calm, "echo ok")).stdout).toBe("ok\n");
  });
});

describe("internal failures", () => {
  it("reach the client as a short reference; the internal message goes to the engine log only", () => {
    const logged: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void logged.push(args.join(" ")));
    try {
      const cause = new Error(
        "bwrap: Can't bind mount /srv/baton/data/engine/sbx/sbx_1/tmp: No such file or directory",
      );
      const err = ApiError.internal("The sandbox failed to start", cause);
      expect(err.status).toBe(500);
      expect(err.code).toBe("internal_error");
      expect(err.detail).toMatch(/^The sandbox failed to start \(ref [0-9a-f]{8}\); see the engine log$/);
      expect(JSON.stringify({ detail: err.detail, ...err.extra })).not.toMatch(/bwrap|\/srv\/baton/);
      const ref = (err.extra as { ref: string }).ref;
      expect(logged.some((l) => l.includes(`ref ${ref}`) && l.includes("/srv/baton/data/engine"))).toBe(true);
      // Other codes keep their status (a 502 when the sandbox side failed).
      expect(
        ApiError.internal("Could not run the command in the sandbox", cause, "sandbox_agent_unreachable").status,
      ).toBe(502);
    } finally {
      spy.mockRestore();
    }
  });
});

// --- Every route, a bounded table of malformed requests ---------------------------------------

interface Route {
  method: string;
  path: string;
  /** A valid body: the malformed ones are derived from it. */
  body?: Json;
  /** A valid query string (without "?"). */
  query?: string;
  admin?: boolean;
}

/** `S` is the fuzzed sandbox; other ids do not exist. Pause, resume and delete come last. */
function routes(): Route[] {
  const S = fuzzed;
  const env = { A: "1" };
  return [
    { method: "GET", path: "/healthz" },
    { method: "GET", path: "/v1/base-images" },
    { method: "GET", path: "/v1/limits" },
    { method: "GET", path: "/v1/sandboxes/limits" },
    { method: "GET", path: "/v1/usage", query: "from=2026-01-01&to=2026-01-02&granularity=day&sandbox_id=x" },
    { method: "GET", path: "/v1/sandboxes/usage", query: "sandbox_id=x" },
    {
      method: "POST",
      path: "/v1/sandboxes",
      body: {
        template: "nope-template",
        env,
        metadata: { k: "v" },
        volume: { id: "vol_nope", mount_path: "/persist" },
      },
    },
    { method: "GET", path: "/v1/sandboxes", query: "limit=10&status=running&metadata[k]=v" },
    { method: "GET", path: `/v1/sandboxes/${S}` },
    {
      method: "PATCH",
      path: `/v1/sandboxes/${S}`,
      body: { metadata: { k: "v" }, timeout_seconds: 600, on_timeout: "kill" },
    },
    { method: "POST", path: `/v1/sandboxes/${S}/timeout`, body: { timeout_seconds: 600 } },
    {
      method: "POST",
      path: `/v1/sandboxes/${S}/exec`,
      body: { command: "true", cwd: "/workspace", env, timeout_seconds: 5 },
    },
    {
      method: "POST",
      path: `/v1/sandboxes/${S}/exec/stream`,
      body: { command: "true", cwd: "/workspace", env, timeout_seconds: 5 },
    },
    { method: "GET", path: `/v1/sandboxes/${S}/files`, query: "path=/workspace&list=true" },
    {
      method: "POST",
      path: `/v1/sandboxes/${S}/files`,
      body: { path: "/workspace/f", content: "aGk=", encoding: "base64", mode: "644" },
    },
    { method: "DELETE", path: `/v1/sandboxes/${S}/files`, query: "path=/workspace/none&recursive=true" },
    {
      method: "POST",
      path: `/v1/sandboxes/${S}/files/batch`,
      body: { files: [{ path: "/workspace/b", content: "hi", encoding: "utf8" }] },
    },
    {
      method: "POST",
      path: `/v1/sandboxes/${S}/files/presign-upload`,
      body: { path: "/workspace/f", expires_in_seconds: 60, max_bytes: 10 },
    },
    {
      method: "POST",
      path: `/v1/sandboxes/${S}/files/presign-download`,
      body: { path: "/workspace/f", expires_in_seconds: 60 },
    },
    { method: "GET", path: `/v1/sandboxes/${S}/files/raw`, query: "path=/workspace/f" },
    { method: "PUT", path: `/v1/sandboxes/${S}/files/raw`, query: "path=/workspace/f" },
    { method: "GET", path: `/v1/sandboxes/${S}/metrics`, query: "window=60" },
    { method: "GET", path: `/v1/sandboxes/${S}/events`, query: "limit=10&type=exec" },
    { method: "GET", path: `/v1/sandboxes/${S}/previews/8000` },
    { method: "POST", path: `/v1/sandboxes/${S}/preview-token` },
    {
      method: "POST",
      path: `/v1/sandboxes/${S}/pty`,
      body: { cols: 80, rows: 24, command: "/bin/sh", cwd: "/workspace", env },
    },
    { method: "GET", path: `/v1/sandboxes/${S}/pty` },
    { method: "GET", path: `/v1/sandboxes/${S}/pty/pty_nope` },
    { method: "POST", path: `/v1/sandboxes/${S}/pty/pty_nope/resize`, body: { cols: 80, rows: 24 } },
    { method: "POST", path: `/v1/sandboxes/${S}/pty/pty_nope/signal`, body: { signal: "INT" } },
    { method: "DELETE", path: `/v1/sandboxes/${S}/pty/pty_nope` },
    { method: "GET", path: `/v1/sandboxes/${S}/pty/pty_nope/ws` },
    { method: "POST", path: `/v1/sandboxes/${S}/snapshots`, body: { name: "snap-fuzz" } },
    { method: "GET", path: `/v1/sandboxes/${S}/snapshots` },
    { method: "GET", path: "/v1/snapshots", query: "limit=5&sandbox_id=x" },
    { method: "GET", path: "/v1/snapshots/snap_nope" },
    { method: "DELETE", path: "/v1/snapshots/snap_nope" },
    {
      method: "POST",
      path: "/v1/volumes",
      body: { name: "vol-fuzz", size_gb: 1, region: "nowhere", max_lifetime_hours: 1 },
    },
    { method: "GET", path: "/v1/volumes", query: "limit=5&region=fsn1&status=available" },
    { method: "GET", path: "/v1/volumes/vol_nope" },
    { method: "PATCH", path: "/v1/volumes/vol_nope", body: { name: "v2", size_gb: 2, max_lifetime_days: 1 } },
    { method: "DELETE", path: "/v1/volumes/vol_nope" },
    { method: "POST", path: "/v1/volumes/vol_nope/move", body: { region: "fsn1" } },
    { method: "POST", path: "/v1/templates", body: { name: "fuzz", base_image: "nope-image", steps: ["true"], env } },
    { method: "GET", path: "/v1/templates", query: "limit=5&include_builtin=true" },
    { method: "GET", path: "/v1/templates/tmpl_nope" },
    { method: "PUT", path: "/v1/templates/tmpl_nope", body: { name: "fuzz" } },
    { method: "PATCH", path: "/v1/templates/tmpl_nope", body: { name: "fuzz" } },
    { method: "DELETE", path: "/v1/templates/tmpl_nope" },
    { method: "GET", path: "/v1/templates/tmpl_nope/logs", query: "limit=5" },
    {
      method: "POST",
      path: "/v1/webhooks",
      body: { url: "http://127.0.0.1:9/hook", event_types: ["sandbox.created"], description: "d", enabled: false },
    },
    { method: "GET", path: "/v1/webhooks" },
    { method: "GET", path: "/v1/webhooks/wh_nope" },
    { method: "PATCH", path: "/v1/webhooks/wh_nope", body: { url: "http://127.0.0.1:9/h", enabled: true } },
    { method: "DELETE", path: "/v1/webhooks/wh_nope" },
    { method: "POST", path: "/v1/webhooks/wh_nope/test" },
    { method: "POST", path: "/v1/webhooks/wh_nope/enable" },
    { method: "POST", path: "/v1/webhooks/wh_nope/disable" },
    { method: "POST", path: "/v1/webhooks/wh_nope/rotate-secret" },
    { method: "GET", path: "/v1/webhooks/wh_nope/deliveries", query: "limit=5&status=failed" },
    { method: "GET", path: "/v1/webhooks/wh_nope/deliveries/dlv_nope" },
    { method: "POST", path: "/v1/webhooks/wh_nope/deliveries/dlv_nope/redeliver" },
    { method: "GET", path: "/_admin/faults", admin: true },
    {
      method: "POST",
      path: "/_admin/faults",
      admin: true,
      body: { kind: "latency", path: "^/never$", method: "GET", latency_ms: 0, count: 1 },
    },
    { method: "DELETE", path: "/_admin/faults/flt_nope", admin: true },
    { method: "POST", path: "/_admin/tokens", admin: true, body: { scopes: ["sandboxes:read"], label: "fuzz" } },
    { method: "POST", path: `/v1/sandboxes/${S}/pause` },
    { method: "POST", path: `/v1/sandboxes/${S}/resume`, body: { timeout_seconds: 600 } },
    { method: "DELETE", path: `/v1/sandboxes/${S}` },
  ];
}

/** Copies of `v` with one leaf (or record key) changed by `f`; `f` returns undefined to skip a leaf. */
function mutations(v: Json, f: (leaf: Json) => Json | undefined): Json[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => mutations(x, f).map((m) => v.map((y, j) => (j === i ? m : y))));
  if (v && typeof v === "object") {
    const out: Json[] = [];
    for (const [k, x] of Object.entries(v)) {
      for (const m of mutations(x, f)) out.push({ ...v, [k]: m });
      if (!Array.isArray(v))
        out.push(Object.fromEntries(Object.entries(v).map(([k2, x2]) => [k2 === k ? `${k}${NUL}` : k2, x2])));
    }
    const leaf = f(v);
    if (leaf !== undefined) out.push(leaf);
    return out;
  }
  const m = f(v);
  return m === undefined ? [] : [m];
}

/** Malformed bodies derived from a valid one, plus ones that fit no route. */
function badBodies(valid: Json | undefined): { contentType: string | null; body: string | Buffer }[] {
  const json = (b: Json) => ({ contentType: "application/json", body: JSON.stringify(b) });
  const out: { contentType: string | null; body: string | Buffer }[] = [
    { contentType: "application/json", body: '{"a":' },
    { contentType: "application/json", body: "{'a':1}" },
    { contentType: "application/json", body: '{"a":1} trailing' },
    { contentType: "application/json", body: "\u0000" },
    { contentType: "application/json", body: "[".repeat(5000) + "]".repeat(5000) },
    { contentType: "application/json; charset=utf-16", body: "{}" },
    { contentType: "text/plain", body: "{}" },
    { contentType: "application/x-www-form-urlencoded", body: "a=1" },
    { contentType: "multipart/form-data; boundary=x", body: "--x--" },
    { contentType: "application/json", body: Buffer.from([0xff, 0xfe, 0x7b, 0x7d]) },
    { contentType: null, body: "{}" },
    json([]),
    json("x"),
    json(1),
    json(true),
  ];
  if (valid && typeof valid === "object") {
    // Every string (and record key) with a NUL in it; every leaf as the wrong type; every string huge.
    for (const m of mutations(valid, (x) =>
      typeof x === "string" ? `${x.slice(0, 3)}${NUL}${x.slice(3)}` : undefined,
    ))
      out.push(json(m));
    for (const m of mutations(valid, (x) =>
      typeof x === "string"
        ? 7
        : typeof x === "number"
          ? "7"
          : typeof x === "boolean"
            ? "yes"
            : Array.isArray(x)
              ? {}
              : "x",
    ))
      out.push(json(m));
    for (const m of mutations(valid, (x) => (typeof x === "number" ? -1e300 : undefined))) out.push(json(m));
    for (const m of mutations(valid, (x) => (typeof x === "string" ? "é".repeat(70_000) : undefined)))
      out.push(json(m));
  }
  return out;
}

/** Malformed values for one path segment (an id), raw as they go on the wire. */
const BAD_SEGMENTS = [
  "a".repeat(65),
  "a".repeat(101),
  "%00",
  "a%00b",
  "%E0%A4%A",
  "%",
  "%zz",
  "%2e%2e",
  "%2F",
  "%F0%9F%98%80",
  "%0a",
  "%C0%AF",
  "%FF",
];

/** Malformed query strings; `{q}` is the route's valid query, kept so the bad part is what fails. */
const BAD_QUERIES = [
  "%zz=1",
  "{q}&%E0%A4%A=1",
  "{q}&limit=abc&cursor=%00&window=-1&from=yesterday&to=%00&granularity=week",
  "{q}&limit=0&limit=1000000000000000000000",
  "{q}&limit[]=1&limit[x]=2",
  "{q}&follow=maybe&list=maybe&recursive=maybe&include_builtin=maybe&kill_on_disconnect=%00",
  "{q}&status=nope&region=%00&sandbox_id=%00&type=%00&metadata[%00]=%00",
  "path=%00",
  "path=/workspace/a%00b",
  "path=relative",
  "path=/workspace/../../etc/passwd",
  "path=%E0%A4%A",
  "path=",
  `path=/${"a".repeat(5000)}`,
  `x=${"a".repeat(8000)}`,
];

describe("malformed requests over every route", () => {
  it("never get a 5xx, and every error is {detail, code}", async () => {
    const problems: string[] = [];
    let sent = 0;
    const check = async (
      method: string,
      target: string,
      opts: { contentType?: string | null; body?: string | Buffer; admin?: boolean },
    ) => {
      const headers: Record<string, string> = opts.admin ? { "x-baton-bootstrap": e.bootstrap! } : auth();
      if (opts.contentType) headers["Content-Type"] = opts.contentType;
      const what = `${method} ${target.slice(0, 100)} ${opts.contentType ?? ""} ${JSON.stringify(opts.body ?? "").slice(0, 80)}`;
      sent++;
      // A request left unanswered (a hung response) is a problem like a 500, not the end of the run.
      const r = await raw(port, method, target, { headers, body: opts.body }).catch((err: Error) => err);
      if (r instanceof Error) return void problems.push(`${what} → no answer: ${r.message.split("\n")[0]}`);
      const problem = contractProblem(r);
      if (problem) problems.push(`${what} → ${r.status} ${problem}: ${r.text.slice(0, 200)}`);
    };
    for (const route of routes()) {
      const withQuery = (path: string, q: string | undefined) => (q ? `${path}?${q}` : path);
      // Each id in the path, malformed.
      const segments = route.path.split("/");
      for (const [i, seg] of segments.entries()) {
        if (!/^(sbx|pty|snap|vol|tmpl|wh|dlv|flt)_|^8000$/.test(seg)) continue;
        for (const bad of BAD_SEGMENTS) {
          const target = withQuery(segments.map((s, j) => (j === i ? bad : s)).join("/"), route.query);
          await check(route.method, target, {
            admin: route.admin,
            contentType: route.body ? "application/json" : undefined,
            body: route.body ? JSON.stringify(route.body) : undefined,
          });
        }
      }
      // Malformed queries (on a valid body, if any).
      for (const q of BAD_QUERIES) {
        const target = `${route.path}?${q.replace("{q}", route.query ?? "")}`;
        await check(route.method, target, {
          admin: route.admin,
          contentType: route.body ? "application/json" : undefined,
          body: route.body ? JSON.stringify(route.body) : undefined,
        });
      }
      // Malformed bodies (GET and HEAD carry none).
      if (route.method !== "GET") {
        for (const b of badBodies(route.body))
          await check(route.method, withQuery(route.path, route.query), { admin: route.admin, ...b });
      }
    }
    // Methods nobody routes.
    for (const method of ["OPTIONS", "TRACE", "PROPFIND", "PURGE", "SEARCH"])
      await check(method, `/v1/sandboxes/${calm}`, {});
    expect(problems, problems.slice(0, 40).join("\n")).toEqual([]);
    // Bounded by construction (a fixed table, each request answered or given up after 5 s); about
    // 2000 requests, ~10 s here.
    expect(sent).toBeGreaterThan(1000);
    // The untouched sandbox still works: nothing above reached it.
    expect((await exec(e, calm, "echo ok")).stdout).toBe("ok\n");
  });
});
