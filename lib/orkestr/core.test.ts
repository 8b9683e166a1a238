import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createOrkestrClient, normalizeBaseUrl, type OrkestrClientOptions } from "./core";
import {
  OrkestrAbortError,
  OrkestrConnectionError,
  OrkestrError,
  OrkestrParseError,
  OrkestrTimeoutError,
} from "./errors";
import { paginate } from "./pagination";
import { buildQuery, path } from "./path";
import { ERRORS, HTML_502, SANDBOX } from "./testing/contract-examples";
import {
  apiError,
  connectionRefused,
  fakeFetch,
  hangingFetch,
  json,
  recordingSleep,
  type Reply,
} from "./testing/fake-fetch";
import { rejectsWith } from "../../engine/test/helpers/async";

const BASE = "https://api.orkestr.eu";

function client(script: Reply | Reply[], extra: Partial<OrkestrClientOptions> = {}) {
  const fetch = fakeFetch(script);
  const { sleep, waits } = recordingSleep();
  const c = createOrkestrClient({ baseUrl: BASE, token: "ork_test", fetch, sleep, random: () => 0, ...extra });
  return { c, fetch, waits };
}

describe("base URL (C5)", () => {
  it("accepts the URL with or without /v1 and trailing slashes", () => {
    expect(normalizeBaseUrl("https://api.orkestr.eu")).toBe("https://api.orkestr.eu/v1");
    expect(normalizeBaseUrl("https://api.orkestr.eu/")).toBe("https://api.orkestr.eu/v1");
    expect(normalizeBaseUrl("https://api.orkestr.eu/v1")).toBe("https://api.orkestr.eu/v1");
    expect(normalizeBaseUrl(" https://api.orkestr.eu/v1/ ")).toBe("https://api.orkestr.eu/v1");
    expect(normalizeBaseUrl("http://127.0.0.1:8787")).toBe("http://127.0.0.1:8787/v1");
    expect(normalizeBaseUrl("/api")).toBe("/api/v1");
    expect(normalizeBaseUrl("/api/v1")).toBe("/api/v1");
  });

  it.each(["", "ftp://x.example", "not a url", "https://u:p@api.orkestr.eu", "https://api.orkestr.eu/?x=1"])(
    "refuses %j with invalid_base_url",
    (bad) => {
      expect(() => normalizeBaseUrl(bad)).toThrow(OrkestrError);
      try {
        normalizeBaseUrl(bad);
      } catch (e) {
        expect((e as OrkestrError).code).toBe("invalid_base_url");
      }
    },
  );

  it("sends requests under /v1 either way", async () => {
    for (const baseUrl of ["https://api.orkestr.eu", "https://api.orkestr.eu/v1/"]) {
      const { c, fetch } = client(json(SANDBOX), { baseUrl });
      await c.sandboxes.get("sbx_1");
      expect(fetch.calls[0]!.url).toBe("https://api.orkestr.eu/v1/sandboxes/sbx_1");
    }
  });
});

describe("path tag", () => {
  it("encodes parameters", () => {
    expect(path`/sandboxes/${"sbx_1"}/pty/${42}`).toBe("/sandboxes/sbx_1/pty/42");
    expect(path`/snapshots/${"my snap/1?x#y"}`).toBe("/snapshots/my%20snap%2F1%3Fx%23y");
    expect(path`/volumes/${"%2e%2e"}`).toBe("/volumes/%252e%252e");
  });

  it.each([".", "..", ""])("rejects the segment %j", (bad) => {
    expect(() => path`/sandboxes/${bad}/files`).toThrow(/Refused to build the request path/);
  });

  it("rejects literal dot segments and non-string params", () => {
    expect(() => path`/sandboxes/../limits`).toThrow(OrkestrError);
    expect(() => path`/sandboxes/${{} as unknown as string}`).toThrow(/must be a string or number/);
  });

  it("rejects .. ids before any request is sent", async () => {
    const { c, fetch } = client(json(SANDBOX));
    const err = await rejectsWith(c.sandboxes.get(".."), OrkestrError);
    expect(err.code).toBe("invalid_path");
    expect(err.status).toBe(400);
    expect(fetch.calls).toHaveLength(0);
  });

  it("buildQuery skips empty values and repeats arrays", () => {
    expect(buildQuery({ a: 1, b: undefined, c: null, d: ["x", "y"], e: true, f: "a b&c" })).toBe(
      "?a=1&d=x&d=y&e=true&f=a+b%26c",
    );
    expect(buildQuery({})).toBe("");
  });
});

describe("requests", () => {
  it("sends the Bearer token, JSON body, Accept and a User-Agent", async () => {
    const { c, fetch } = client(json(SANDBOX, { status: 201 }), { userAgent: "baton-test/1" });
    await c.sandboxes.create({ template: "python-3.12", size: "small" });
    const call = fetch.calls[0]!;
    expect(call.method).toBe("POST");
    expect(call.path).toBe("/sandboxes");
    expect(call.headers.get("authorization")).toBe("Bearer ork_test");
    expect(call.headers.get("content-type")).toBe("application/json");
    expect(call.headers.get("accept")).toBe("application/json");
    expect(call.headers.get("user-agent")).toBe("baton-test/1");
    expect(call.body).toEqual({ template: "python-3.12", size: "small" });
  });

  it("sends no Authorization without a token (cookie-authenticated browser use)", async () => {
    const fetch = fakeFetch(json(SANDBOX));
    const c = createOrkestrClient({ baseUrl: "/api", fetch, credentials: "same-origin" });
    await c.sandboxes.get("sbx_1");
    expect(fetch.calls[0]!.headers.has("authorization")).toBe(false);
    expect(fetch.calls[0]!.url).toBe("/api/v1/sandboxes/sbx_1");
  });

  it("adds an Idempotency-Key to creates and keeps it across retries", async () => {
    const { c, fetch } = client([
      apiError(503, "fleet_full", "full", {}, { "Retry-After": "1" }),
      json(SANDBOX, { status: 201 }),
    ]);
    await c.sandboxes.create({ template: "python-3.12" });
    const keys = fetch.calls.map((r) => r.headers.get("idempotency-key"));
    expect(keys[0]).toMatch(/^[0-9a-f-]{20,}$/);
    expect(keys[1]).toBe(keys[0]);
  });

  it("uses a caller's Idempotency-Key and adds none to plain POSTs", async () => {
    const { c, fetch } = client([json(SANDBOX, { status: 201 }), json({ stdout: "", stderr: "", exit_code: 0 })]);
    await c.sandboxes.create({ template: "python-3.12" }, { idempotencyKey: "mine-1" });
    await c.exec.run("sbx_1", "true");
    expect(fetch.calls[0]!.headers.get("idempotency-key")).toBe("mine-1");
    expect(fetch.calls[1]!.headers.has("idempotency-key")).toBe(false);
  });

  it("merges per-call headers, case-insensitively, and never caches", async () => {
    const { c, fetch } = client(json(SANDBOX));
    await c.sandboxes.get("sbx_1", { headers: { "X-Trace": "t1", accept: "application/vnd.test+json" } });
    expect(fetch.calls[0]!.headers.get("x-trace")).toBe("t1");
    expect(fetch.calls[0]!.headers.get("accept")).toBe("application/vnd.test+json");
    expect((fetch.calls[0]!.init as { cache?: string }).cache).toBe("no-store");
    expect(fetch.calls[0]!.init.redirect).toBe("manual");
  });

  it("does not follow redirects (a redirect could point past the SSRF check)", async () => {
    const { c } = client(new Response(null, { status: 302, headers: { Location: "http://169.254.169.254/latest" } }));
    const err = await rejectsWith(c.sandboxes.get("sbx_1"), OrkestrError);
    expect(err.code).toBe("redirect_not_followed");
    expect(err.detail).toContain("http://169.254.169.254/latest");
  });
});

describe("error mapping through the client", () => {
  it.each(ERRORS.filter((e) => e.status < 500 && e.status !== 429))(
    "$status $code is thrown as is, never retried",
    async ({ status, code, detail, extra }) => {
      const { c, fetch, waits } = client(() => apiError(status, code, detail, extra));
      const err = await rejectsWith(c.sandboxes.get("sbx_1"), OrkestrError);
      expect([err.status, err.code, err.detail]).toEqual([status, code, detail]);
      expect(fetch.calls).toHaveLength(1);
      expect(waits).toEqual([]);
    },
  );

  it("a non-JSON 502 page is a clear OrkestrError after the retries", async () => {
    const { c, fetch, waits } = client(
      () => new Response(HTML_502, { status: 502, headers: { "Content-Type": "text/html" } }),
    );
    const err = await rejectsWith(c.sandboxes.get("sbx_1"), OrkestrError);
    expect(err.status).toBe(502);
    expect(err.code).toBe("bad_gateway");
    expect(err.message).toMatch(/HTML page \("502 Bad Gateway"\) instead of JSON/);
    expect(fetch.calls).toHaveLength(3);
    expect(waits).toEqual([500, 1000]);
  });

  it("a success body that is not JSON is an OrkestrParseError", async () => {
    const { c } = client(
      () => new Response("<html>hello</html>", { status: 200, headers: { "Content-Type": "text/html" } }),
    );
    const err = await rejectsWith(c.sandboxes.get("sbx_1"), OrkestrError);
    expect(err).toBeInstanceOf(OrkestrParseError);
    expect(err.code).toBe("bad_response");
    expect(err.message).toMatch(/the 200 response is not JSON \(text\/html\)/);
  });

  it("a success body that does not match the schema is an OrkestrParseError naming the field", async () => {
    const { c, fetch } = client(() => json({ ...SANDBOX, id: 42 }));
    const err = await rejectsWith(c.sandboxes.get("sbx_1"), OrkestrError);
    expect(err).toBeInstanceOf(OrkestrParseError);
    expect(err.detail).toMatch(/id: /);
    expect((err as OrkestrParseError).upstreamStatus).toBe(200);
    expect(fetch.calls).toHaveLength(1);
  });

  it("an empty success body where one is expected is an OrkestrParseError", async () => {
    const { c } = client(() => new Response(null, { status: 200 }));
    const err = await rejectsWith(c.sandboxes.get("sbx_1"), OrkestrError);
    expect(err).toBeInstanceOf(OrkestrParseError);
    expect(err.detail).toMatch(/empty body/);
  });

  it("a list item that does not match is an OrkestrParseError naming the item", async () => {
    const { c } = client(() => json([SANDBOX, { status: "running" }]));
    const err = await rejectsWith(c.sandboxes.list(), OrkestrError);
    expect(err).toBeInstanceOf(OrkestrParseError);
    expect(err.detail).toMatch(/item 1: id:/);
  });
});

describe("timeouts and connection errors", () => {
  it("gives up after timeoutMs with an OrkestrTimeoutError", async () => {
    const fetch = hangingFetch();
    const c = createOrkestrClient({ baseUrl: BASE, fetch, timeoutMs: 40, maxRetries: 0 });
    const err = await rejectsWith(c.sandboxes.get("sbx_1"), OrkestrError);
    expect(err).toBeInstanceOf(OrkestrTimeoutError);
    expect(err.code).toBe("timeout");
    expect(err.message).toBe(
      "The orkestr API at https://api.orkestr.eu/v1 did not answer within 40 ms. Check the URL or try again.",
    );
  });

  it("retries a timed-out GET, not a timed-out exec", async () => {
    const { sleep, waits } = recordingSleep();
    const fetch = hangingFetch();
    const c = createOrkestrClient({ baseUrl: BASE, fetch, timeoutMs: 20, sleep, random: () => 0 });
    await rejectsWith(c.sandboxes.get("sbx_1"), OrkestrError);
    expect(fetch.calls).toHaveLength(3);
    expect(waits).toEqual([500, 1000]);
    fetch.calls.length = 0;
    await rejectsWith(c.exec.run("sbx_1", { command: "sleep 1", timeout_seconds: 1 }, { timeoutMs: 20 }), OrkestrError);
    expect(fetch.calls).toHaveLength(1);
  });

  it("a plain exec waits for the command's own timeout, not the client default", async () => {
    let seen: AbortSignal | null = null;
    const fetch = fakeFetch((req) => {
      seen = req.signal;
      return new Promise<Response>((resolve) =>
        setTimeout(() => resolve(json({ stdout: "ok", stderr: "", exit_code: 0 })), 80),
      );
    });
    const c = createOrkestrClient({ baseUrl: BASE, fetch, timeoutMs: 30 });
    const r = await c.exec.run("sbx_1", { command: "sleep 0.05", timeout_seconds: 5 });
    expect(r.stdout).toBe("ok");
    expect(seen).not.toBeNull();
  });

  it("maps a refused connection to OrkestrConnectionError and retries idempotent calls", async () => {
    const { c, fetch, waits } = client(() => Promise.reject(connectionRefused()));
    const err = await rejectsWith(c.sandboxes.get("sbx_1"), OrkestrError);
    expect(err).toBeInstanceOf(OrkestrConnectionError);
    expect(err.code).toBe("connection_error");
    expect(err.message).toMatch(/ECONNREFUSED/);
    expect(fetch.calls).toHaveLength(3);
    expect(waits).toEqual([500, 1000]);
  });

  it("does not retry a non-idempotent POST after a connection error", async () => {
    const { c, fetch } = client(() => Promise.reject(connectionRefused()));
    await rejectsWith(c.exec.run("sbx_1", "echo hi"), OrkestrError);
    expect(fetch.calls).toHaveLength(1);
  });

  it("a caller's abort is an OrkestrAbortError and is not retried", async () => {
    const fetch = hangingFetch();
    const c = createOrkestrClient({ baseUrl: BASE, fetch });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 10);
    const err = await rejectsWith(c.sandboxes.get("sbx_1", { signal: ac.signal }), OrkestrError);
    expect(err).toBeInstanceOf(OrkestrAbortError);
    expect(fetch.calls).toHaveLength(1);
  });
});

describe("retries", () => {
  it("retries GET on 500/502/503/504/408/429 with exponential backoff and jitter", async () => {
    for (const status of [500, 502, 503, 504, 408, 429]) {
      const { c, fetch, waits } = client(
        [apiError(status, undefined, "x"), apiError(status, undefined, "x"), json(SANDBOX)],
        { random: () => 1 },
      );
      const s = await c.sandboxes.get("sbx_1");
      expect(s.id).toBe(SANDBOX.id);
      expect(fetch.calls).toHaveLength(3);
      // 0.5 s, 1 s minus the full 25 % jitter
      expect(waits).toEqual([375, 750]);
    }
  });

  it("caps the backoff at 8 s", async () => {
    const { c, waits } = client(() => apiError(500, "internal_error", "x"), { maxRetries: 6, retryMaxSeconds: 600 });
    await rejectsWith(c.sandboxes.get("sbx_1"), OrkestrError);
    expect(waits).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
  });

  it("honours Retry-After in seconds", async () => {
    const { c, waits } = client([apiError(429, "rate_limited", "slow", {}, { "Retry-After": "3" }), json(SANDBOX)]);
    await c.sandboxes.get("sbx_1");
    expect(waits).toEqual([3000]);
  });

  it("honours Retry-After as an HTTP date", async () => {
    const now = Date.parse("2025-06-01T12:00:00Z");
    const { c, waits } = client(
      [
        apiError(503, "fleet_full", "full", {}, { "Retry-After": "Sun, 01 Jun 2025 12:00:04 GMT" }),
        json(SANDBOX, { status: 201 }),
      ],
      { now: () => now },
    );
    await c.sandboxes.create({ template: "python-3.12" });
    expect(waits).toEqual([4000]);
  });

  it("retries 503 fleet_full for any method, up to maxRetries", async () => {
    const full = () =>
      apiError(503, "fleet_full", "The fleet is momentarily full", { retry_after_seconds: 2 }, { "Retry-After": "2" });
    const { c, fetch, waits } = client(full);
    const err = await rejectsWith(c.sandboxes.resume("sbx_1"), OrkestrError);
    expect(err.code).toBe("fleet_full");
    expect(err.retryAfterSeconds).toBe(2);
    expect(fetch.calls).toHaveLength(3);
    expect(waits).toEqual([2000, 2000]);
  });

  it("resume succeeds after a fleet_full blip", async () => {
    const { c, fetch } = client([
      apiError(503, "fleet_full", "full", {}, { "Retry-After": "1" }),
      json({ ...SANDBOX, status: "running" }),
    ]);
    expect((await c.sandboxes.resume("sbx_1", { timeout_seconds: 600 })).status).toBe("running");
    expect(fetch.calls.map((r) => r.body)).toEqual([{ timeout_seconds: 600 }, { timeout_seconds: 600 }]);
  });

  it("stops when Retry-After would exceed retryMaxSeconds", async () => {
    const { c, fetch, waits } = client(() => apiError(503, "fleet_full", "full", {}, { "Retry-After": "120" }));
    const err = await rejectsWith(c.sandboxes.create({ template: "python-3.12" }), OrkestrError);
    expect(err.code).toBe("fleet_full");
    expect(err.retryAfterSeconds).toBe(120);
    expect(fetch.calls).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it("counts every wait against retryMaxSeconds", async () => {
    const { c, fetch, waits } = client(() => apiError(503, "fleet_full", "full", {}, { "Retry-After": "25" }), {
      maxRetries: 5,
    });
    await rejectsWith(c.sandboxes.create({ template: "python-3.12" }), OrkestrError);
    expect(waits).toEqual([25_000, 25_000]);
    expect(fetch.calls).toHaveLength(3);
  });

  it("maxRetries: 0 per call turns retries off", async () => {
    const { c, fetch } = client(() => apiError(503, "fleet_full", "full", {}, { "Retry-After": "1" }));
    await rejectsWith(c.sandboxes.create({ template: "python-3.12" }, { maxRetries: 0 }), OrkestrError);
    expect(fetch.calls).toHaveLength(1);
  });

  it("never retries a non-idempotent POST on 500 or 503 other than fleet_full", async () => {
    for (const r of [() => apiError(500, "internal_error", "x"), () => apiError(503, "fault_injected", "x")]) {
      const { c, fetch } = client(r);
      await rejectsWith(c.exec.run("sbx_1", "echo"), OrkestrError);
      expect(fetch.calls).toHaveLength(1);
    }
  });

  it("retries a create (it carries an Idempotency-Key) on 500", async () => {
    const { c, fetch } = client([apiError(500, "internal_error", "x"), json(SANDBOX, { status: 201 })]);
    await c.sandboxes.create({ template: "python-3.12" });
    expect(fetch.calls).toHaveLength(2);
  });

  it("never retries 501 not_implemented or 429 concurrency_limit", async () => {
    for (const r of [
      () => apiError(501, "not_implemented", "x"),
      () => apiError(429, "concurrency_limit", "x", {}, { "Retry-After": "1" }),
    ]) {
      const { c, fetch } = client(r);
      await rejectsWith(c.sandboxes.get("sbx_1"), OrkestrError);
      expect(fetch.calls).toHaveLength(1);
    }
  });

  it("honours x-should-retry: false", async () => {
    const { c, fetch } = client(() => apiError(500, "internal_error", "x", {}, { "x-should-retry": "false" }));
    await rejectsWith(c.sandboxes.get("sbx_1"), OrkestrError);
    expect(fetch.calls).toHaveLength(1);
  });

  it("uses the real sleep by default and can be aborted while waiting", async () => {
    const fetch = fakeFetch(() => apiError(503, "fleet_full", "full", {}, { "Retry-After": "30" }));
    const c = createOrkestrClient({ baseUrl: BASE, fetch });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    const err = await rejectsWith(c.sandboxes.create({ template: "python-3.12" }, { signal: ac.signal }), OrkestrError);
    expect(err).toBeInstanceOf(OrkestrAbortError);
    expect(fetch.calls).toHaveLength(1);
  });
});

describe("lists (bare or wrapped arrays, the cursor from a header or the body)", () => {
  const A = { ...SANDBOX, id: "sbx_a" };
  const B = { ...SANDBOX, id: "sbx_b" };

  it.each([
    ["a bare array", [A, B]],
    ["{items}", { items: [A, B] }],
    ["{data}", { data: [A, B] }],
    ["{sandboxes}", { sandboxes: [A, B] }],
    ["{results}", { results: [A, B] }],
  ])("accepts %s", async (_name, body) => {
    const { c } = client(json(body));
    const page = await c.sandboxes.list();
    expect(page.items.map((s) => s.id)).toEqual(["sbx_a", "sbx_b"]);
    expect(page.nextCursor).toBeNull();
  });

  it.each([
    ["X-Next-Cursor header", json([A], { headers: { "X-Next-Cursor": "c1" } })],
    ["X-Next-Token header", json([A], { headers: { "X-Next-Token": "c1" } })],
    ["next_cursor field", json({ items: [A], next_cursor: "c1" })],
    ["nextCursor field", json({ items: [A], nextCursor: "c1" })],
    ["next_token field", json({ data: [A], next_token: "c1" })],
    ["numeric next_cursor", json({ items: [A], next_cursor: 1 }).clone()],
  ])("reads the cursor from the %s", async (name, response) => {
    const { c } = client(response);
    const page = await c.sandboxes.list();
    expect(page.nextCursor).toBe(name.startsWith("numeric") ? "1" : "c1");
  });

  it("treats an empty or null cursor as the last page", async () => {
    for (const body of [
      { items: [A], next_cursor: "" },
      { items: [A], next_cursor: null },
    ]) {
      const { c } = client(json(body));
      expect((await c.sandboxes.list()).nextCursor).toBeNull();
    }
  });

  it("refuses a body that is no list", async () => {
    const { c } = client(json({ sandbox: A }));
    const err = await rejectsWith(c.sandboxes.list(), OrkestrError);
    expect(err).toBeInstanceOf(OrkestrParseError);
    expect(err.detail).toMatch(/expected a list/);
  });

  it("sends filters in the contract's spelling", async () => {
    const { c, fetch } = client(json([]));
    await c.sandboxes.list({
      status: ["running", "paused"],
      metadata: { agent_run: "r_42" },
      template: "python-3.12",
      region: "fsn1",
      limit: 10,
      cursor: "abc",
    });
    const q = fetch.calls[0]!.query;
    expect(q.get("status")).toBe("running,paused");
    expect(q.get("metadata[agent_run]")).toBe("r_42");
    expect([q.get("template"), q.get("region"), q.get("limit"), q.get("cursor")]).toEqual([
      "python-3.12",
      "fsn1",
      "10",
      "abc",
    ]);
  });

  it("listAll walks every page", async () => {
    const { c, fetch } = client([
      json([A], { headers: { "X-Next-Cursor": "p2" } }),
      json({ items: [B], next_cursor: "p3" }),
      json({ data: [{ ...A, id: "sbx_c" }] }),
    ]);
    const ids: string[] = [];
    for await (const s of c.sandboxes.listAll({ status: "running" })) ids.push(s.id);
    expect(ids).toEqual(["sbx_a", "sbx_b", "sbx_c"]);
    expect(fetch.calls.map((r) => r.query.get("cursor"))).toEqual([null, "p2", "p3"]);
    expect(fetch.calls.every((r) => r.query.get("status") === "running")).toBe(true);
  });

  it("paginate stops when a server repeats a cursor", async () => {
    let n = 0;
    const items: number[] = [];
    for await (const i of paginate(async () => ({ items: [n++], nextCursor: "same" }))) items.push(i);
    expect(items).toEqual([0, 1]);
  });
});

describe("core.json", () => {
  it("parses with any schema and uses emptyAs for empty bodies", async () => {
    const { c } = client([json({ a: 1 }), new Response(null, { status: 202 })]);
    expect(await c.core.json({ method: "GET", path: "/x", schema: z.object({ a: z.number() }) })).toEqual({ a: 1 });
    expect(await c.core.json({ method: "POST", path: "/y", schema: z.object({}).loose(), emptyAs: {} })).toEqual({});
  });
});
