import "server-only";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { AuditAction } from "../../lib/audit-actions";
import { createOrkestrClient } from "../../lib/orkestr/core";
import { errorFromResponse } from "../../lib/orkestr/errors";
import { listAuditEvents } from "../../lib/server/db/audit";
import { DbConflictError } from "../../lib/server/db/errors";
import { revokeSessionById } from "../../lib/server/db/sessions";
import { testBackends } from "../../lib/server/db/test-backends";
import { AppError } from "../../lib/server/errors";
import { checkHost, checkOrigin, declaredRoute, route } from "../../lib/server/route";
import { jsonOf, makeUser, noParams, request, sessionCookie, uniq, useConsoleDb } from "./helpers";

describe("checkOrigin", () => {
  // Served as http://baton.test: the Origins accepted are that one and BATON_ALLOWED_HOSTS'.
  beforeAll(() => {
    vi.stubEnv("BATON_URL", "http://baton.test");
    vi.stubEnv("BATON_ALLOWED_HOSTS", "console.example.org");
  });
  afterAll(() => vi.unstubAllEnvs());
  const req = (method: string, headers: Record<string, string>) =>
    new Request("http://baton.test/api/x", { method, headers: { host: "baton.test", ...headers } });

  it("lets safe methods through from anywhere", () => {
    expect(checkOrigin(req("GET", { origin: "https://evil.example", "sec-fetch-site": "cross-site" }))).toBeNull();
    expect(checkOrigin(req("HEAD", { "sec-fetch-site": "cross-site" }))).toBeNull();
  });

  it("trusts Sec-Fetch-Site: same-origin passes, same-site and cross-site do not", () => {
    expect(checkOrigin(req("POST", { "sec-fetch-site": "same-origin" }))).toBeNull();
    expect(checkOrigin(req("POST", { "sec-fetch-site": "none" }))).toBeNull();
    // A sandbox preview on *.sbx.localhost is same-site with a console on localhost.
    expect(
      checkOrigin(req("POST", { "sec-fetch-site": "same-site", origin: "http://abc.sbx.localhost:3000" })),
    ).toMatchObject({ status: 403, code: "bad_origin" });
    expect(checkOrigin(req("DELETE", { "sec-fetch-site": "cross-site" }))).toMatchObject({ code: "bad_origin" });
  });

  it("falls back to Origin against Baton's own origins (BATON_URL, BATON_ALLOWED_HOSTS)", () => {
    expect(checkOrigin(req("POST", { origin: "http://baton.test" }))).toBeNull();
    expect(checkOrigin(req("POST", { origin: "https://console.example.org" }))).toBeNull();
    expect(checkOrigin(req("POST", { origin: "http://baton.test.evil.example" }))).toMatchObject({
      code: "bad_origin",
    });
    expect(checkOrigin(req("POST", { origin: "https://baton.test" }))).toMatchObject({ code: "bad_origin" }); // BATON_URL says http
    expect(checkOrigin(req("POST", { origin: "null" }))).toMatchObject({ code: "bad_origin" });
    expect(checkOrigin(req("PATCH", { origin: "file://" }))).toMatchObject({ code: "bad_origin" });
  });

  it("never takes the request's own Host or X-Forwarded-Host for an allowed origin (the sender picks those)", () => {
    // A rebinding page on evil.example sends Host: evil.example and Origin: http://evil.example.
    expect(checkOrigin(req("POST", { host: "evil.example", origin: "http://evil.example" }))).toMatchObject({
      code: "bad_origin",
    });
    expect(
      checkOrigin(req("POST", { origin: "https://evil.example", "x-forwarded-host": "evil.example" })),
    ).toMatchObject({ code: "bad_origin" });
  });

  it("lets non-browser clients (no Origin, no Sec-Fetch-Site) through", () => {
    expect(checkOrigin(req("POST", {}))).toBeNull();
  });
});

describe("checkHost", () => {
  afterEach(() => vi.unstubAllEnvs());
  const req = (host: string | null) => new Request("http://x/api/x", { headers: host === null ? {} : { host } });

  it("serves the loopback names on the console's port by default, and nothing else", () => {
    vi.stubEnv("BATON_URL", "");
    vi.stubEnv("BATON_ALLOWED_HOSTS", "");
    vi.stubEnv("PORT", "3000");
    for (const ok of ["localhost:3000", "127.0.0.1:3000", "[::1]:3000", "LOCALHOST:3000"])
      expect(checkHost(req(ok)), ok).toBeNull();
    for (const bad of [
      "evil.example:3000",
      "evil.example",
      "localhost:3001",
      "localhost",
      "localhost.:3000",
      "a@localhost:3000",
      "",
      null,
    ]) {
      expect(checkHost(req(bad)), String(bad)).toMatchObject({ status: 421, code: "host_not_allowed" });
    }
  });

  it("serves BATON_URL's name instead, plus BATON_ALLOWED_HOSTS", () => {
    vi.stubEnv("BATON_URL", "https://baton.example.com");
    vi.stubEnv("BATON_ALLOWED_HOSTS", "intranet-name, 10.0.0.5:3000");
    for (const ok of [
      "baton.example.com",
      "baton.example.com:443",
      "intranet-name",
      "intranet-name:8080",
      "10.0.0.5:3000",
    ])
      expect(checkHost(req(ok)), ok).toBeNull();
    for (const bad of [
      "localhost:3000",
      "127.0.0.1:3000",
      "10.0.0.5:3001",
      "evil.example",
      "baton.example.com.evil.example",
    ]) {
      expect(checkHost(req(bad)), bad).toMatchObject({ code: "host_not_allowed" });
    }
  });
});

describe("declaredRoute", () => {
  it("reads back the auth and permission a handler was built with, and nothing for other functions", () => {
    expect(declaredRoute(route({ auth: "user", perm: "volumes.write" }, () => null))).toEqual({
      auth: "user",
      perm: "volumes.write",
      tokensOnly: false,
      signedLink: false,
    });
    expect(declaredRoute(route({ auth: "public" }, () => null))).toEqual({
      auth: "public",
      perm: undefined,
      tokensOnly: false,
      signedLink: false,
    });
    const challenge = () => 'Bearer realm="baton"';
    expect(
      declaredRoute(route({ auth: "user", perm: "sandboxes.read", tokens: { only: true, challenge } }, () => null)),
    ).toEqual({ auth: "user", perm: "sandboxes.read", tokensOnly: true, signedLink: false });
    expect(declaredRoute(route({ auth: "user", perm: "sandboxes.read", signedLink: true }, () => null))).toEqual({
      auth: "user",
      perm: "sandboxes.read",
      tokensOnly: false,
      signedLink: true,
    });
    // A link exempts a route from the session only where a permission still decides.
    expect(() => route({ auth: "user", signedLink: true }, () => null)).toThrow(/signedLink/);
    expect(() => route({ auth: "public", signedLink: true }, () => null)).toThrow(/signedLink/);
    expect(declaredRoute(async () => new Response(null))).toBeUndefined();
    expect(declaredRoute("GET")).toBeUndefined();
  });
});

describe.each(testBackends)("route() on $name", (backend) => {
  const ctx = useConsoleDb(backend);
  afterEach(() => vi.restoreAllMocks());

  const whoami = route({ auth: "user" }, ({ user, team }) => ({ id: user.id, role: team?.role ?? null }));

  it("requires a session for auth: user (401 with {detail, code})", async () => {
    const res = await whoami(request("/api/whoami"), noParams);
    expect(res.status).toBe(401);
    expect(await jsonOf(res)).toEqual({ detail: expect.stringMatching(/not signed in/), code: "unauthorized" });
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("passes the user of a live session, and refuses the same cookie once the session is revoked", async () => {
    const { user } = await makeUser(ctx.db(), "member");
    const { cookie, sessionId } = await sessionCookie(ctx.db(), user.id);
    const ok = await whoami(request("/api/whoami", { cookie }), noParams);
    expect(ok.status).toBe(200);
    expect(await jsonOf(ok)).toEqual({ id: user.id, role: "member" });
    expect(ok.headers.get("cache-control")).toBe("no-store");

    await revokeSessionById(ctx.db(), sessionId);
    expect((await whoami(request("/api/whoami", { cookie }), noParams)).status).toBe(401);
  });

  it("refuses garbage, tampered and expired cookies", async () => {
    const { user } = await makeUser(ctx.db());
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const tampered = cookie.slice(0, -4) + (cookie.endsWith("AAAA") ? "BBBB" : "AAAA");
    for (const c of ["next-auth.session-token=garbage", tampered, "other=1"]) {
      expect((await whoami(request("/api/whoami", { cookie: c }), noParams)).status).toBe(401);
    }
    const expired = await sessionCookie(ctx.db(), user.id, { now: Date.now() - 10_000, ttlMs: 5_000 });
    expect((await whoami(request("/api/whoami", { cookie: expired.cookie }), noParams)).status).toBe(401);
  });

  it("auth: optional resolves a session when there is one; public never looks", async () => {
    const { user } = await makeUser(ctx.db());
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const optional = route({ auth: "optional" }, ({ user }) => ({ id: user?.id ?? null }));
    const pub = route({ auth: "public" }, ({ user }) => ({ id: user?.id ?? null }));
    expect(await jsonOf(await optional(request("/x", { cookie }), noParams))).toEqual({ id: user.id });
    expect(await jsonOf(await optional(request("/x"), noParams))).toEqual({ id: null });
    expect(await jsonOf(await pub(request("/x", { cookie }), noParams))).toEqual({ id: null });
  });

  it("refuses cross-site mutations with 403 bad_origin before doing anything", async () => {
    const handler = vi.fn(() => ({ ok: true }));
    const post = route({ auth: "public" }, handler);
    const res = await post(
      request("/api/x", {
        method: "POST",
        headers: { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      }),
      noParams,
    );
    expect(res.status).toBe(403);
    expect(await jsonOf(res)).toEqual({ detail: expect.stringContaining("another site"), code: "bad_origin" });
    expect(handler).not.toHaveBeenCalled();
    // The same request from the page itself goes through.
    expect((await post(request("/api/x", { method: "POST" }), noParams)).status).toBe(200);
  });

  it("refuses a Host name Baton does not serve with 421 host_not_allowed before doing anything (DNS rebinding)", async () => {
    const handler = vi.fn(() => ({ ok: true }));
    const post = route({ auth: "public" }, handler);
    // A page on evil.example that resolves to Baton's address: its requests are same-origin to it.
    const rebinding = { host: "evil.example", origin: "http://evil.example", "sec-fetch-site": "same-origin" };
    const res = await post(request("/api/x", { method: "POST", headers: rebinding }), noParams);
    expect(res.status).toBe(421);
    expect(await jsonOf(res)).toEqual({
      detail: expect.stringContaining("does not answer to this host name"),
      code: "host_not_allowed",
    });
    expect(handler).not.toHaveBeenCalled();
    // Reads too, signed in or not: the session cookie of baton.test never goes to evil.example, but
    // a handler must not rely on that.
    const { user } = await makeUser(ctx.db());
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    expect((await whoami(request("/api/whoami", { cookie, headers: { host: "evil.example" } }), noParams)).status).toBe(
      421,
    );
    expect((await whoami(request("/api/whoami", { cookie }), noParams)).status).toBe(200);
  });

  it("checks the permission in the user's team: 403 forbidden naming it", async () => {
    const write = route({ auth: "user", perm: "sandboxes.write" }, () => ({ ok: true }));
    const viewer = await makeUser(ctx.db(), "viewer");
    const member = await makeUser(ctx.db(), "member");
    const teamless = await makeUser(ctx.db(), null);
    const denied = await write(
      request("/api/x", { method: "POST", cookie: (await sessionCookie(ctx.db(), viewer.user.id)).cookie }),
      noParams,
    );
    expect(denied.status).toBe(403);
    expect(await jsonOf(denied)).toEqual({
      detail: "Your role in Team (viewer) does not allow this (sandboxes.write).",
      code: "forbidden",
    });
    expect(
      (
        await write(
          request("/api/x", { method: "POST", cookie: (await sessionCookie(ctx.db(), member.user.id)).cookie }),
          noParams,
        )
      ).status,
    ).toBe(200);
    const noTeam = await write(
      request("/api/x", { method: "POST", cookie: (await sessionCookie(ctx.db(), teamless.user.id)).cookie }),
      noParams,
    );
    expect(noTeam.status).toBe(403);
    expect(() => route({ auth: "public", perm: "sandboxes.read" as never }, () => null)).toThrow(
      /permission needs auth/,
    );
  });

  describe("input parsing", () => {
    const create = route(
      {
        auth: "public",
        params: z.object({ id: z.string().regex(/^sbx_\w+$/, { error: "must look like sbx_…" }) }),
        query: z.object({ wait: z.enum(["true", "false"]).optional(), tag: z.array(z.string()).optional() }),
        body: z.object({ name: z.string().min(1, { error: "is required" }), size: z.number().int().positive() }),
      },
      ({ params, query, body }) => ({ params, query, body }),
    );
    const params = (id: string) => ({ params: Promise.resolve({ id }) });

    it("awaits and parses params, query and body", async () => {
      const res = await create(
        request("/api/sandboxes/sbx_1?wait=true&tag=a&tag=b", { method: "POST", body: { name: "dev", size: 2 } }),
        params("sbx_1"),
      );
      expect(res.status).toBe(200);
      expect(await jsonOf(res)).toEqual({
        params: { id: "sbx_1" },
        query: { wait: "true", tag: ["a", "b"] },
        body: { name: "dev", size: 2 },
      });
    });

    it("bad JSON → 400 bad_request; empty → 400; not JSON → 415", async () => {
      const bad = await create(
        request("/api/sandboxes/sbx_1", { method: "POST", body: '{"name": "dev",' }),
        params("sbx_1"),
      );
      expect(bad.status).toBe(400);
      expect(await jsonOf(bad)).toEqual({ detail: "The request body is not valid JSON.", code: "bad_request" });
      const empty = await create(request("/api/sandboxes/sbx_1", { method: "POST", body: "" }), params("sbx_1"));
      expect(empty.status).toBe(400);
      const form = await create(
        request("/api/sandboxes/sbx_1", {
          method: "POST",
          body: "name=dev",
          headers: { "content-type": "application/x-www-form-urlencoded" },
        }),
        params("sbx_1"),
      );
      expect(form.status).toBe(415);
      expect((await jsonOf(form)).code).toBe("unsupported_media_type");
    });

    it("zod failures → 422 validation_error with a readable detail and errors by field", async () => {
      const res = await create(
        request("/api/sandboxes/sbx_1", { method: "POST", body: { name: "", size: -1 } }),
        params("sbx_1"),
      );
      expect(res.status).toBe(422);
      const body = await jsonOf(res);
      expect(body.code).toBe("validation_error");
      expect(body.detail).toBe("Name: is required. Size: Too small: expected number to be >0.");
      expect(body.errors).toEqual({ name: "is required", size: "Too small: expected number to be >0" });

      const badParam = await create(
        request("/api/sandboxes/nope", { method: "POST", body: { name: "a", size: 1 } }),
        params("nope"),
      );
      expect(badParam.status).toBe(422);
      expect(await jsonOf(badParam)).toMatchObject({
        detail: "Id: must look like sbx_….",
        errors: { id: "must look like sbx_…" },
      });

      const badQuery = await create(
        request("/api/sandboxes/sbx_1?wait=maybe", { method: "POST", body: { name: "a", size: 1 } }),
        params("sbx_1"),
      );
      expect(badQuery.status).toBe(422);
      expect((await jsonOf(badQuery)).errors).toHaveProperty("wait");

      const notObject = await create(
        request("/api/sandboxes/sbx_1", { method: "POST", body: "[1,2]" }),
        params("sbx_1"),
      );
      expect(notObject.status).toBe(422);
      expect((await jsonOf(notObject)).detail).toMatch(/^The request body: /);
    });

    it("optionalBody: an absent or empty body parses as {}; a present one is still read and validated", async () => {
      const resume = route(
        {
          auth: "public",
          body: z.object({ timeout_seconds: z.number().int().min(10).optional() }),
          optionalBody: true,
        },
        ({ body }) => body,
      );
      const none = await resume(
        new Request("http://baton.test/x", { method: "POST", headers: { host: "baton.test" } }),
        noParams,
      );
      expect(none.status).toBe(200);
      expect(await jsonOf(none)).toEqual({});
      expect(await jsonOf(await resume(request("/x", { method: "POST", body: "" }), noParams))).toEqual({});
      expect(
        await jsonOf(await resume(request("/x", { method: "POST", body: { timeout_seconds: 60 } }), noParams)),
      ).toEqual({ timeout_seconds: 60 });
      expect((await resume(request("/x", { method: "POST", body: { timeout_seconds: 1 } }), noParams)).status).toBe(
        422,
      );
      expect((await resume(request("/x", { method: "POST", body: "{oops" }), noParams)).status).toBe(400);
    });

    it("refuses bodies over the limit with 413", async () => {
      const small = route({ auth: "public", body: z.unknown(), maxBodyBytes: 64 }, () => ({ ok: true }));
      const res = await small(request("/x", { method: "POST", body: { pad: "x".repeat(100) } }), noParams);
      expect(res.status).toBe(413);
    });
  });

  describe("chunked bodies", () => {
    it("a chunked body past the limit, without Content-Length, is refused with 413 while it is read, not after", async () => {
      const LIMIT = 64 * 1024;
      const CHUNK = 16 * 1024;
      const handler = vi.fn(() => ({ ok: true }));
      const small = route({ auth: "public", body: z.unknown(), maxBodyBytes: LIMIT }, handler);
      // 64 MiB of JSON in 16 KiB chunks, produced only as fast as they are read.
      let pulled = 0;
      let cancelled = false;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (pulled >= 64 * 1024 * 1024) return controller.close();
          controller.enqueue(
            new TextEncoder().encode(pulled === 0 ? `{"pad":"${"x".repeat(CHUNK - 8)}` : "x".repeat(CHUNK)),
          );
          pulled += CHUNK;
        },
        cancel() {
          cancelled = true;
        },
      });
      const req = new Request("http://baton.test/x", {
        method: "POST",
        headers: { host: "baton.test", "content-type": "application/json", "sec-fetch-site": "same-origin" },
        body,
        duplex: "half",
      } as RequestInit);
      expect(req.headers.get("content-length")).toBeNull();
      const res = await small(req, noParams);
      expect(res.status).toBe(413);
      expect(await jsonOf(res)).toEqual({
        detail: "The request body is larger than 64 KiB.",
        code: "payload_too_large",
      });
      expect(handler).not.toHaveBeenCalled();
      // Read up to the limit and a little more (the stream's read-ahead), then given up.
      expect(pulled).toBeLessThanOrEqual(LIMIT + 4 * CHUNK);
      expect(cancelled).toBe(true);
    });

    it("a chunked body within the limit is read whole", async () => {
      const echo = route({ auth: "public", body: z.object({ a: z.string() }), maxBodyBytes: 1024 }, ({ body }) => body);
      const parts = ['{"a":', '"ét', 'é"}'];
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          // A two-byte character split across chunks still decodes.
          const bytes = new TextEncoder().encode(parts.join(""));
          controller.enqueue(bytes.slice(0, 7));
          controller.enqueue(bytes.slice(7));
          controller.close();
        },
      });
      const req = new Request("http://baton.test/x", {
        method: "POST",
        headers: { host: "baton.test", "content-type": "application/json" },
        body,
        duplex: "half",
      } as RequestInit);
      const res = await echo(req, noParams);
      expect(res.status).toBe(200);
      expect(await jsonOf(res)).toEqual({ a: "été" });
    });
  });

  describe("error mapping", () => {
    const throwing = (err: unknown) =>
      route({ auth: "public" }, () => {
        throw err;
      });

    it("AppError → its status and code", async () => {
      const res = await throwing(new AppError("not_found", "No such sandbox."))(request("/x"), noParams);
      expect(res.status).toBe(404);
      expect(await jsonOf(res)).toEqual({ detail: "No such sandbox.", code: "not_found" });
    });

    it("OrkestrError keeps the upstream status, code and Retry-After", async () => {
      const upstream = errorFromResponse({
        status: 503,
        headers: new Headers({ "retry-after": "17", "content-type": "application/json" }),
        text: JSON.stringify({ detail: "The fleet is full.", code: "fleet_full" }),
      });
      vi.spyOn(console, "error").mockImplementation(() => undefined);
      const res = await throwing(upstream)(request("/x"), noParams);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("17");
      expect(await jsonOf(res)).toEqual({
        detail: expect.stringContaining("(503 fleet_full)"),
        code: "fleet_full",
        retry_after_seconds: 17,
      });

      const quota = errorFromResponse({
        status: 429,
        headers: new Headers({ "retry-after": "3" }),
        text: JSON.stringify({ detail: "slow down", code: "rate_limited" }),
      });
      const limited = await throwing(quota)(request("/x"), noParams);
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("3");
    });

    describe("what the upstream answered, through the orkestr client's core", () => {
      /** A handler that reads a sandbox from an upstream answering `response` (no retries, as the proxy). */
      const through = (response: () => Response) =>
        route({ auth: "public" }, () => {
          const orkestr = createOrkestrClient({
            baseUrl: "http://orkestr.test",
            token: "ork_test",
            maxRetries: 0,
            fetch: async () => response(),
          });
          return orkestr.sandboxes.get("sbx_1");
        });

      it("a redirect or a 304 becomes a logged 502 upstream_redirect, never followed and never a bare 3xx or 500", async () => {
        const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
        const cases = [
          () => new Response(null, { status: 302, headers: { location: "http://169.254.169.254/latest/meta-data/" } }),
          () =>
            new Response(null, { status: 307, headers: { location: "https://elsewhere.example/v1/sandboxes/sbx_1" } }),
          () => new Response(null, { status: 304 }),
        ];
        for (const make of cases) {
          const status = make().status;
          logged.mockClear();
          const res = await through(make)(request("/x"), noParams);
          expect(res.status, String(status)).toBe(502);
          const body = await jsonOf(res);
          expect(body).toEqual({ detail: expect.stringContaining(`answered ${status}`), code: "upstream_redirect" });
          expect(JSON.stringify(body)).not.toContain("169.254");
          expect(res.headers.get("location")).toBeNull();
          expect(logged.mock.calls.map((c) => String(c[0])).join("\n")).toMatch(new RegExp(`answered ${status} `));
        }
      });

      it("a 5xx keeps its status but not its words: Baton's own detail goes to the browser, the upstream's to the log", async () => {
        const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
        const internal = "psycopg2.OperationalError: could not connect to server at 10.2.3.4:5432 (sandbox-db-primary)";
        const res = await through(() => Response.json({ detail: internal, code: "internal_error" }, { status: 500 }))(
          request("/x"),
          noParams,
        );
        expect(res.status).toBe(500);
        expect(await jsonOf(res)).toEqual({
          detail: "The orkestr API had an internal error (500).",
          code: "internal_error",
        });
        expect(logged.mock.calls.map((c) => String(c[0])).join("\n")).toContain(internal);

        const html = await through(
          () =>
            new Response("<html><title>502 from lb-internal-7.corp</title></html>", {
              status: 502,
              headers: { "content-type": "text/html" },
            }),
        )(request("/x"), noParams);
        expect(html.status).toBe(502);
        const text = JSON.stringify(await jsonOf(html));
        expect(text).not.toContain("lb-internal-7");
        expect(text).toContain("(502).");

        // 4xx details are the user's to read (what was wrong with the request): passed on.
        const notFound = await through(() =>
          Response.json({ detail: "Sandbox sbx_1 not found", code: "sandbox_not_found" }, { status: 404 }),
        )(request("/x"), noParams);
        expect(await jsonOf(notFound)).toEqual({ detail: "Sandbox sbx_1 not found", code: "sandbox_not_found" });
      });
    });

    it("repository conflicts → 409", async () => {
      const res = await throwing(new DbConflictError("slug_taken", "a team with this slug already exists"))(
        request("/x"),
        noParams,
      );
      expect(res.status).toBe(409);
      expect(await jsonOf(res)).toEqual({ detail: "A team with this slug already exists.", code: "slug_taken" });
    });

    it("anything else → 500 with a generic detail: no message, no stack", async () => {
      const log = vi.spyOn(console, "error").mockImplementation(() => {});
      const secret = "postgres://baton:s3cr3t@db.internal:5432/baton";
      const res = await throwing(new Error(`connect failed: ${secret}`))(request("/api/boom"), noParams);
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({
        detail: expect.stringMatching(/^Something went wrong on the Baton server\. .*reference: [0-9a-f]{12}\.$/),
        code: "internal_error",
      });
      expect(text).not.toContain("s3cr3t");
      expect(text).not.toContain("connect failed");
      expect(text).not.toMatch(/\bat .*\.ts/);
      expect(log).toHaveBeenCalled();
      expect(String(log.mock.calls[0]?.[0])).toContain("GET /api/boom");
    });

    it("a handler returning nothing answers 204", async () => {
      const res = await route({ auth: "public" }, () => undefined)(request("/x", { method: "DELETE" }), noParams);
      expect(res.status).toBe(204);
    });
  });

  it("records the audit action after a successful answer, with user, team and IP", async () => {
    const { user, teamId } = await makeUser(ctx.db(), "admin");
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    // Not in the catalogue (unique per run, so runs sharing a database do not see each other's rows).
    const action = `test.${uniq("did").replace(/-/g, "_")}` as AuditAction;
    const ok = route({ auth: "user", perm: "team.manage", audit: action }, () => ({ ok: true }));
    const fails = route({ auth: "user", audit: action }, () => {
      throw new AppError("conflict", "No.");
    });
    expect((await ok(request("/x", { method: "POST", cookie }), noParams)).status).toBe(200);
    expect((await fails(request("/x", { method: "POST", cookie }), noParams)).status).toBe(409);
    const events = (await listAuditEvents(ctx.db(), { userId: user.id })).filter((e) => e.action === action);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ teamId, userId: user.id, ip: "192.0.2.10" });
  });
});
