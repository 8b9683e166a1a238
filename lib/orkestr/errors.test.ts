import { describe, expect, it } from "vitest";
import {
  errorFromResponse,
  codeForStatus,
  OrkestrAbortError,
  OrkestrConnectionError,
  OrkestrError,
  OrkestrParseError,
  OrkestrTimeoutError,
  parseRetryAfter,
  readableDetail,
} from "./errors";
import { ERRORS, HTML_502, VALIDATION_ERROR } from "./testing/contract-examples";

const BASE = "https://api.orkestr.eu/v1";

function fromBody(status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return errorFromResponse({
    status,
    headers: new Headers(headers),
    text,
    baseUrl: BASE,
    method: "GET",
    url: `${BASE}/x`,
  });
}

describe("errorFromResponse", () => {
  it.each(ERRORS)("maps $status $code from the contract table", ({ status, code, detail, extra, headers }) => {
    const err = fromBody(status, { detail, code, ...extra }, headers);
    expect(err).toBeInstanceOf(OrkestrError);
    expect(err).toBeInstanceOf(Error);
    expect(err.status).toBe(status);
    expect(err.code).toBe(code);
    expect(err.detail).toBe(detail);
    expect(err.raw).toBe(detail);
    expect(err.message.startsWith(detail)).toBe(true);
    expect(err.body).toMatchObject({ detail, code, ...extra });
  });

  it("reads Retry-After from the header and the body", () => {
    expect(fromBody(503, { detail: "full", code: "fleet_full" }, { "Retry-After": "30" }).retryAfterSeconds).toBe(30);
    expect(fromBody(503, { detail: "full", code: "fleet_full", retry_after_seconds: 12 }).retryAfterSeconds).toBe(12);
    expect(fromBody(404, { detail: "x", code: "sandbox_not_found" }).retryAfterSeconds).toBeNull();
  });

  it("says what to do for well-known codes", () => {
    expect(
      fromBody(503, { detail: "The fleet is momentarily full", code: "fleet_full" }, { "Retry-After": "30" }).message,
    ).toBe("The fleet is momentarily full. orkestr has no free capacity right now; try again in 30 s.");
    expect(fromBody(401, { detail: "Not authenticated", code: "unauthorized" }).message).toMatch(/Check the API token/);
    expect(fromBody(501, { detail: "Snapshots are not implemented", code: "not_implemented" }).message).toMatch(
      /does not offer this feature/,
    );
  });

  it("renders a FastAPI array detail readably and keeps the raw array", () => {
    const err = fromBody(422, VALIDATION_ERROR);
    expect(err.code).toBe("validation_error");
    expect(err.detail).toBe(
      "Invalid request: timeout_seconds: Input should be greater than or equal to 10; env.1BAD: env names are letters, digits and _.",
    );
    expect(err.raw).toEqual(VALIDATION_ERROR.detail);
    expect(err.fieldErrors).toEqual({
      timeout_seconds: "Input should be greater than or equal to 10",
      "env.1BAD": "env names are letters, digits and _",
    });
  });

  it("gives a code when FastAPI sends none (dispatch on code always works)", () => {
    const err = fromBody(422, { detail: VALIDATION_ERROR.detail });
    expect(err.code).toBe("validation_error");
    expect(fromBody(404, { detail: "Not Found" }).code).toBe("not_found");
    expect(fromBody(418, { detail: "teapot" }).code).toBe("client_error");
    expect(fromBody(599, { detail: "odd" }).code).toBe("server_error");
  });

  it("turns an HTML 502 page into a clear error instead of crashing", () => {
    const err = fromBody(502, HTML_502, { "Content-Type": "text/html" });
    expect(err.status).toBe(502);
    expect(err.code).toBe("bad_gateway");
    expect(err.detail).toBe(
      `The orkestr API at ${BASE} answered 502 Bad Gateway with an HTML page ("502 Bad Gateway") instead of JSON, usually from a proxy or load balancer in front of it. Try again in a moment; if it persists, check the URL.`,
    );
    expect(typeof err.raw).toBe("string");
    expect(err.body).toBeNull();
  });

  it("handles empty, plain-text and JSON-without-detail bodies", () => {
    expect(fromBody(503, "").detail).toBe(
      `The orkestr API at ${BASE} answered 503 Service Unavailable with an empty body. Try again in a moment.`,
    );
    expect(fromBody(500, "upstream connect error or disconnect/reset before headers").detail).toBe(
      `The orkestr API at ${BASE} answered 500 Internal Server Error: upstream connect error or disconnect/reset before headers`,
    );
    expect(fromBody(500, { oops: true }).detail).toBe(
      `The orkestr API at ${BASE} answered 500 Internal Server Error without an explanation.`,
    );
    expect(fromBody(500, "[1,2]").code).toBe("internal_error");
  });

  it("accepts other providers' error shapes", () => {
    // E2B: {code:int, message}
    const e2b = fromBody(409, {
      code: 409,
      message: "sandbox cannot be paused",
      error_code: "sandbox_capacity_unavailable",
    });
    expect(e2b.code).toBe("sandbox_capacity_unavailable");
    expect(e2b.detail).toBe("sandbox cannot be paused");
    const nested = fromBody(400, { error: { code: "bad_thing", message: "that was bad" } });
    expect(nested.code).toBe("bad_thing");
    expect(nested.detail).toBe("that was bad");
    expect(fromBody(400, { error: "plain error string" }).detail).toBe("plain error string");
    expect(fromBody(400, { detail: { msg: "object detail" }, code: "bad_request" }).detail).toBe("object detail");
  });

  it("keeps the request id and exposes a safe JSON shape", () => {
    const err = fromBody(
      429,
      { detail: "Slow down", code: "rate_limited" },
      { "X-Request-Id": "req_123", "Retry-After": "2" },
    );
    expect(err.requestId).toBe("req_123");
    expect(err.toJSON()).toEqual({ detail: "Slow down", code: "rate_limited", status: 429, retry_after_seconds: 2 });
    expect(JSON.stringify(err)).not.toContain("x-request-id");
  });
});

describe("parseRetryAfter", () => {
  const h = (v: Record<string, string>) => new Headers(v);
  it("reads seconds, HTTP dates and retry-after-ms", () => {
    const now = Date.parse("2025-06-01T12:00:00Z");
    expect(parseRetryAfter(h({ "Retry-After": "5" }), now)).toBe(5);
    expect(parseRetryAfter(h({ "Retry-After": "1.5" }), now)).toBe(1.5);
    expect(parseRetryAfter(h({ "Retry-After": "Sun, 01 Jun 2025 12:00:42 GMT" }), now)).toBe(42);
    expect(parseRetryAfter(h({ "Retry-After": "Sun, 01 Jun 2025 11:00:00 GMT" }), now)).toBe(0);
    expect(parseRetryAfter(h({ "retry-after-ms": "250", "Retry-After": "9" }), now)).toBe(0.25);
    expect(parseRetryAfter(h({ "Retry-After": "soon" }), now)).toBeNull();
    expect(parseRetryAfter(h({}), now)).toBeNull();
    expect(parseRetryAfter(null)).toBeNull();
  });
});

describe("client-side errors", () => {
  it("connection errors name the host and the cause", () => {
    const cause = Object.assign(new TypeError("fetch failed"), {
      cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }),
    });
    const err = new OrkestrConnectionError({ baseUrl: "http://127.0.0.1:9/v1", cause });
    expect(err.status).toBe(0);
    expect(err.code).toBe("connection_error");
    expect(err.message).toBe(
      "Could not reach the orkestr API at http://127.0.0.1:9/v1 (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9). Check the URL and that the server is running, then try again.",
    );
    expect(err.cause).toBe(cause);
  });

  it("timeouts say how long and what to do", () => {
    const err = new OrkestrTimeoutError({ baseUrl: BASE, timeoutMs: 30_000 });
    expect(err).toBeInstanceOf(OrkestrConnectionError);
    expect(err.status).toBe(0);
    expect(err.code).toBe("timeout");
    expect(err.message).toBe(`The orkestr API at ${BASE} did not answer within 30 s. Check the URL or try again.`);
  });

  it("parse errors are bad_response with the upstream status kept", () => {
    const err = new OrkestrParseError({ baseUrl: BASE, upstreamStatus: 200, problem: "status: expected string" });
    expect(err.code).toBe("bad_response");
    expect(err.status).toBe(502);
    expect(err.upstreamStatus).toBe(200);
    expect(err.message).toMatch(
      /could not read: status: expected string\. The server may not speak the orkestr v1 API/,
    );
  });

  it("aborts are their own kind", () => {
    const err = new OrkestrAbortError();
    expect(err.code).toBe("aborted");
    expect(err.status).toBe(0);
  });
});

describe("helpers", () => {
  it("readableDetail handles every shape", () => {
    expect(readableDetail("  x ")).toBe("x");
    expect(readableDetail(null)).toBe("");
    expect(readableDetail([])).toBe("");
    expect(readableDetail(["a", { msg: "b" }, { loc: ["query", "limit"], msg: "too big" }])).toBe(
      "Invalid request: a; b; limit: too big.",
    );
    expect(readableDetail(42)).toBe("42");
  });
  it("codeForStatus covers the contract statuses", () => {
    expect([400, 401, 403, 404, 409, 410, 413, 422, 429, 501, 503].map(codeForStatus)).toEqual([
      "bad_request",
      "unauthorized",
      "forbidden",
      "not_found",
      "conflict",
      "gone",
      "payload_too_large",
      "validation_error",
      "rate_limited",
      "not_implemented",
      "service_unavailable",
    ]);
  });
});
