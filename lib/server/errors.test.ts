import "server-only";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { errorFromResponse, OrkestrConnectionError, OrkestrTimeoutError } from "../orkestr/errors";
import { CryptoError } from "./crypto";
import { DbConflictError, DbNotFoundError, DbRowError, MigrationError } from "./db/errors";
import { AppError, ERROR_CODES, errorResponse, validationError } from "./errors";
import { LocalEngineError } from "./local-engine";
import { UnsafeUrlError } from "./ssrf";
import { VAULT_ERROR_STATUS, VaultError } from "./tokens";

async function answer(err: unknown): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = errorResponse(err);
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

describe("errors", () => {
  afterEach(() => vi.restoreAllMocks());

  it("AppError takes its status from the code table", async () => {
    for (const [code, status] of Object.entries(ERROR_CODES)) {
      expect(new AppError(code as keyof typeof ERROR_CODES, "x").status).toBe(status);
    }
    const { status, body, headers } = await answer(
      new AppError("rate_limited", "Slow down.", { retryAfterSeconds: 12.2 }),
    );
    expect(status).toBe(429);
    expect(body).toEqual({ detail: "Slow down.", code: "rate_limited", retry_after_seconds: 12.2 });
    expect(headers.get("retry-after")).toBe("13");
    expect(headers.get("content-type")).toBe("application/json");
    expect(headers.get("cache-control")).toBe("no-store");
  });

  it("a ZodError becomes a 422 with one readable detail and errors by field", async () => {
    const schema = z.object({
      email: z.email({ error: "is not a valid email address" }),
      team_name: z.string().min(1, { error: "is required" }),
      password: z.string(),
    });
    const parsed = schema.safeParse({ email: "nope", team_name: "" });
    expect(parsed.success).toBe(false);
    const { status, body } = await answer(parsed.error);
    expect(status).toBe(422);
    expect(body.code).toBe("validation_error");
    expect(body.detail).toBe("Email: is not a valid email address. Team name: is required. Password: is required.");
    expect(body.errors).toEqual({
      email: "is not a valid email address",
      team_name: "is required",
      password: "is required",
    });
  });

  it("issues without a path name the input", () => {
    const parsed = z.object({ a: z.string() }).safeParse("text");
    expect(validationError(parsed.error!, "the request body").detail).toMatch(/^The request body: /);
  });

  it("an OrkestrError keeps its status, code and Retry-After; a 5xx's detail is Baton's own (the upstream's is logged)", async () => {
    const upstream = errorFromResponse({
      status: 503,
      headers: new Headers({ "retry-after": "30", "content-type": "application/json" }),
      text: JSON.stringify({
        detail: "No capacity in eu-central-7 (scheduler pod sched-3 at 10.4.0.12)",
        code: "fleet_full",
      }),
    });
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const { status, body, headers } = await answer(upstream);
    expect(status).toBe(503);
    expect(body).toEqual({
      detail: "orkestr has no free capacity right now (503 fleet_full). It asked to wait 30 s before the next try.",
      code: "fleet_full",
      retry_after_seconds: 30,
    });
    expect(headers.get("retry-after")).toBe("30");
    expect(String(logged.mock.calls[0]?.[0])).toContain("sched-3 at 10.4.0.12");
    logged.mockRestore();

    const notFound = errorFromResponse({
      status: 404,
      headers: new Headers(),
      text: JSON.stringify({ detail: "sandbox sbx_1 not found", code: "not_found" }),
    });
    expect(await answer(notFound)).toMatchObject({
      status: 404,
      body: { code: "not_found", detail: "sandbox sbx_1 not found" },
    });
  });

  it("an upstream refusal's scalar context fields pass on; Baton's own keys, nested values and a 5xx's fields do not", async () => {
    const inUse = errorFromResponse({
      status: 409,
      headers: new Headers({ "content-type": "application/json" }),
      text: JSON.stringify({
        detail: "Volume vol_1 is attached to sbx_9",
        code: "volume_in_use",
        attached_sandbox_id: "sbx_9",
        limit: 10,
        nested: { secret: "x" },
        errors: { name: "upstream's" },
        "Weird-Key": "x",
        long: "y".repeat(2000),
      }),
    });
    const { status, body } = await answer(inUse);
    expect(status).toBe(409);
    expect(body).toEqual({
      detail: "Volume vol_1 is attached to sbx_9",
      code: "volume_in_use",
      attached_sandbox_id: "sbx_9",
      limit: 10,
      long: "y".repeat(500),
    });

    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const failed = errorFromResponse({
      status: 500,
      headers: new Headers({ "content-type": "application/json" }),
      text: JSON.stringify({ detail: "boom", code: "internal_error", host: "10.0.0.7" }),
    });
    expect((await answer(failed)).body).not.toHaveProperty("host");
  });

  it("no upstream answer maps to 502, a timeout to 504", async () => {
    expect(
      (await answer(new OrkestrConnectionError({ baseUrl: "http://x.test", cause: new Error("ECONNREFUSED") }))).status,
    ).toBe(502);
    expect((await answer(new OrkestrTimeoutError({ baseUrl: "http://x.test", timeoutMs: 5000 }))).status).toBe(504);
  });

  it("a refused upstream connection is 503 upstream_unreachable, a reset one 502 upstream_reset, both with Retry-After", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    // What undici throws: TypeError("fetch failed") around the system error.
    const system = (code: string) => new TypeError("fetch failed", { cause: Object.assign(new Error(code), { code }) });
    const refused = await answer(
      new OrkestrConnectionError({
        baseUrl: "http://127.0.0.1:8787",
        cause: system("ECONNREFUSED"),
        method: "GET",
        url: "http://127.0.0.1:8787/v1/sandboxes?limit=5",
      }),
    );
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ code: "upstream_unreachable", retry_after_seconds: 3 });
    expect(refused.body.detail).toBe(
      "The orkestr API at http://127.0.0.1:8787 refused the connection (ECONNREFUSED): it is not running or is restarting. Baton keeps retrying on its own.",
    );
    expect(refused.headers.get("retry-after")).toBe("3");
    // A refused change never arrived: safe to say nothing changed.
    const refusedPost = await answer(
      new OrkestrConnectionError({
        baseUrl: "x",
        cause: system("ECONNREFUSED"),
        method: "POST",
        url: "http://e.test/v1/sandboxes",
      }),
    );
    expect(refusedPost.body.detail).toMatch(/Nothing was changed; try again in 3 s/);
    // A reset change may have arrived: Baton says it did not repeat it.
    const resetPost = await answer(
      new OrkestrConnectionError({
        baseUrl: "x",
        cause: system("ECONNRESET"),
        method: "POST",
        url: "http://e.test/v1/sandboxes",
      }),
    );
    expect(resetPost.status).toBe(502);
    expect(resetPost.body).toMatchObject({ code: "upstream_reset", retry_after_seconds: 2 });
    expect(resetPost.body.detail).toBe(
      "The orkestr API at http://e.test closed the connection before answering (ECONNRESET). Baton did not repeat the request: it may or may not have taken effect.",
    );
    const socket = await answer(
      new OrkestrConnectionError({
        baseUrl: "x",
        cause: system("UND_ERR_SOCKET"),
        method: "GET",
        url: "http://e.test/v1/x",
      }),
    );
    expect(socket.body).toMatchObject({ code: "upstream_reset" });
    // A DNS failure keeps the generic wording: retrying does not fix a wrong host name.
    const dns = await answer(new OrkestrConnectionError({ baseUrl: "x", cause: system("ENOTFOUND"), method: "GET" }));
    expect(dns).toMatchObject({ status: 502, body: { code: "connection_error" } });
  });

  it("a database that went away is 503 database_unavailable with Retry-After, not a 500", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    for (const err of [
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      Object.assign(new Error("the database system is starting up"), { code: "57P03" }),
      new Error("Connection terminated unexpectedly"),
      new MigrationError(undefined, {
        cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
      }),
    ]) {
      const { status, body, headers } = await answer(err);
      expect(status, err.message).toBe(503);
      expect(body).toMatchObject({ code: "database_unavailable", retry_after_seconds: 3 });
      expect(headers.get("retry-after")).toBe("3");
    }
    // A query error is no outage.
    expect((await answer(Object.assign(new Error("syntax error"), { code: "42601" }))).status).toBe(500);
  });

  it("repository errors: conflict 409 (with API aliases), not found 404", async () => {
    expect(
      await answer(new DbConflictError("email_taken", "an account with this email address already exists")),
    ).toMatchObject({
      status: 409,
      body: { code: "email_taken", detail: "An account with this email address already exists." },
    });
    expect(await answer(new DbConflictError("setup_done", "Baton is already set up"))).toMatchObject({
      status: 409,
      body: { code: "already_set_up" },
    });
    expect(await answer(new DbNotFoundError("connection"))).toMatchObject({
      status: 404,
      body: { code: "not_found", detail: "Connection not found." },
    });
  });

  it("internal errors answer 500 (503 for migrations) with a generic detail and a logged reference, never the message", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    for (const err of [
      new Error("connect ECONNREFUSED 10.0.0.5:5432 password=hunter2"),
      new DbRowError("users", ["email: Invalid input"]),
      new CryptoError("cannot decrypt: authentication failed"),
      new TypeError("Cannot read properties of undefined (reading 'id')"),
      "a string",
      null,
    ]) {
      const { status, body } = await answer(err);
      expect(status).toBe(500);
      expect(body.code).toBe("internal_error");
      const text = JSON.stringify(body);
      for (const secret of ["hunter2", "ECONNREFUSED", "email: Invalid", "decrypt", "reading 'id'", "at "])
        expect(text).not.toContain(secret);
      const ref = /reference: ([0-9a-f]{12})\./.exec(String(body.detail))?.[1];
      expect(ref).toBeTruthy();
      expect(log.mock.calls.some((call) => String(call[0]).includes(ref!))).toBe(true);
    }
    const migration = await answer(new MigrationError("0001_init", { cause: new Error("relation exists") }));
    expect(migration.status).toBe(503);
    expect(migration.body.code).toBe("service_unavailable");
    expect(JSON.stringify(migration.body)).not.toContain("relation exists");
  });

  it("a VaultError keeps its status, code, detail and field", async () => {
    const bad = await answer(
      new VaultError("bad_token", "The orkestr API at https://api.example.eu refused this token (401).", {
        field: "token",
      }),
    );
    expect(bad).toMatchObject({
      status: 422,
      body: {
        code: "bad_token",
        detail: "The orkestr API at https://api.example.eu refused this token (401).",
        field: "token",
        errors: { token: expect.any(String) },
      },
    });
    const none = await answer(new VaultError("no_connection", "You have no orkestr connection yet."));
    expect(none.status).toBe(409);
    expect(none.body).toEqual({ code: "no_connection", detail: "You have no orkestr connection yet." });
    expect((await answer(new VaultError("upstream_error", "x", { field: "base_url" }))).status).toBe(502);
    // Every vault code is in the table, with the vault's own status.
    for (const [code, status] of Object.entries(VAULT_ERROR_STATUS))
      expect(ERROR_CODES[code as keyof typeof ERROR_CODES]).toBe(status);
  });

  it("an UnsafeUrlError is a 422 about base_url", async () => {
    const { status, body } = await answer(
      new UnsafeUrlError("private_address", "http://10.1.2.3 points at a private address (10.1.2.3)."),
    );
    expect(status).toBe(422);
    expect(body).toEqual({
      code: "private_address",
      detail: "http://10.1.2.3 points at a private address (10.1.2.3).",
      field: "base_url",
      errors: { base_url: expect.any(String) },
    });
    for (const code of ["invalid_url", "private_address", "unresolvable_host"] as const)
      expect(ERROR_CODES[code]).toBe(422);
  });

  it("a LocalEngineError is a 503 with its code and detail, without a field", async () => {
    const { status, body, headers } = await answer(
      new LocalEngineError("local_engine_unreachable", "The local engine at http://127.0.0.1:8787 is not running."),
    );
    expect(status).toBe(503);
    expect(body).toEqual({
      code: "local_engine_unreachable",
      detail: "The local engine at http://127.0.0.1:8787 is not running.",
    });
    expect(headers.get("retry-after")).toBeNull();
    for (const code of [
      "local_engine_secret_missing",
      "local_engine_unreachable",
      "local_engine_refused",
      "local_engine_bad_response",
    ] as const)
      expect(ERROR_CODES[code]).toBe(503);
  });

  it("a connection name conflict is about the name field", async () => {
    const { status, body } = await answer(
      new DbConflictError("connection_name_taken", 'you already have a connection named "Prod"'),
    );
    expect(status).toBe(409);
    expect(body).toMatchObject({
      code: "connection_name_taken",
      field: "name",
      errors: { name: 'You already have a connection named "Prod".' },
    });
  });
});
