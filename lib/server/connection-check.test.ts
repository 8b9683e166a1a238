import "server-only";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { clearFaults, injectFault, startEngine, type EngineHandle } from "../../engine/test/helpers/engine";
import { selfSignedCert } from "../../engine/test/helpers/tls";
import { checkConnection, type ConnectionCheck } from "./connection-check";
import { assertSafeBaseUrl, createGuardedFetch, type Resolver } from "./ssrf";

// checkConnection against the real local engine (good, bad, read-only and write-only tokens, wrong
// path, injected 5xx, fleet_full and latency through /_admin/faults), a closed port, and small
// servers on 127.0.0.1 for the answers the engine never gives (HTML, foreign JSON). The servers'
// origins are passed as the "local engine" so the SSRF guard lets the check reach them.

let e: EngineHandle;
const tokens: Record<"rw" | "read" | "write", string> = { rw: "", read: "", write: "" };

const asEngine = () => ({ localEngineOrigins: [e.origin] });

function failed(check: ConnectionCheck) {
  if (check.ok) throw new Error(`expected the check to fail, got ${JSON.stringify(check)}`);
  return check;
}

beforeAll(async () => {
  e = await startEngine();
  tokens.rw = e.token;
  tokens.read = await e.mint(["sandboxes:read"]);
  tokens.write = await e.mint(["sandboxes:write"]);
}, 60_000);

afterAll(async () => {
  await e?.stop();
});

afterEach(() => clearFaults(e));

describe("checkConnection against the local engine", () => {
  it("accepts a good token and reports plan, regions, engine and latency", async () => {
    const check = await checkConnection(e.origin, tokens.rw, asEngine());
    expect(check).toMatchObject({
      ok: true,
      baseUrl: e.origin,
      plan: "payg",
      engine: { kind: "local", name: "baton-engine" },
    });
    if (!check.ok) throw new Error("unreachable");
    expect(check.regions.length).toBeGreaterThan(0);
    expect(check.latencyMs).toBeGreaterThanOrEqual(0);
    expect(check.latencyMs).toBeLessThan(5_000);
    expect(check.warning).toBeUndefined();
  });

  it("accepts the base URL with /v1 and a trailing slash", async () => {
    const check = await checkConnection(`${e.origin}/v1/`, tokens.rw, asEngine());
    expect(check).toMatchObject({ ok: true, baseUrl: e.origin });
  });

  it("accepts a read-only token: the check only reads", async () => {
    expect(await checkConnection(e.origin, tokens.read, asEngine())).toMatchObject({ ok: true, plan: "payg" });
  });

  it("refuses an unknown token with bad_token", async () => {
    const check = failed(await checkConnection(e.origin, "ork_thisTokenWasNeverMinted_0000", asEngine()));
    expect(check).toEqual({
      ok: false,
      code: "bad_token",
      status: 401,
      detail: "The token was refused (401). Check it was copied whole and not revoked.",
    });
  });

  it("names the missing scope of a write-only token", async () => {
    const check = failed(await checkConnection(e.origin, tokens.write, asEngine()));
    expect(check.code).toBe("insufficient_scope");
    expect(check.status).toBe(403);
    expect(check.detail).toBe(
      "The token lacks the sandboxes:read scope (403 insufficient_scope). Create a token with the sandboxes:read and sandboxes:write scopes.",
    );
  });

  it("says a wrong path does not look like an orkestr v1 API", async () => {
    const check = failed(await checkConnection(`${e.origin}/orkestr`, tokens.rw, asEngine()));
    expect(check.code).toBe("not_orkestr");
    expect(check.status).toBe(404);
    expect(check.detail).toMatch(
      new RegExp(
        `^${e.origin.replace(/\./g, "\\.")}/orkestr does not look like an orkestr v1 API \\(GET ${e.origin.replace(/\./g, "\\.")}/orkestr/v1/sandboxes/limits answered 404 Not Found\\)\\. Check the base URL`,
      ),
    );
  });

  it("reports an injected 502 as upstream_error with the status", async () => {
    await injectFault(e, { kind: "error", status: 502, path: "^/v1/sandboxes/limits$", count: 1 });
    const check = failed(await checkConnection(e.origin, tokens.rw, asEngine()));
    expect(check.code).toBe("upstream_error");
    expect(check.status).toBe(502);
    // The upstream's own detail ("Injected 502 fault") is logged, not shown.
    expect(check.detail).toBe(
      `The orkestr API at ${e.origin} answered 502 Bad Gateway (fault_injected). It is having trouble; try again in a moment.`,
    );
  });

  it("does not retry: one injected 500 fails the check", async () => {
    await injectFault(e, { kind: "error", status: 500, path: "^/v1/sandboxes/limits$", count: 1 });
    expect(failed(await checkConnection(e.origin, tokens.rw, asEngine())).status).toBe(500);
    // The fault was used up by that single attempt: the next check passes.
    expect((await checkConnection(e.origin, tokens.rw, asEngine())).ok).toBe(true);
  });

  it("counts 503 fleet_full as reachable, with a warning", async () => {
    await injectFault(e, { kind: "fleet_full", path: "^/v1/sandboxes/limits$", retry_after_seconds: 30, count: 1 });
    const started = Date.now();
    const check = await checkConnection(e.origin, tokens.rw, asEngine());
    expect(Date.now() - started).toBeLessThan(5_000); // Retry-After 30 s was not honoured: no retries
    expect(check).toMatchObject({ ok: true, plan: null, regions: [] });
    if (!check.ok) throw new Error("unreachable");
    expect(check.warning).toMatch(/reachable but has no free capacity right now \(503 fleet_full\)/);
  });

  it("gives up after the timeout and says so", async () => {
    await injectFault(e, { kind: "latency", latency_ms: 3_000, path: "^/v1/sandboxes/limits$", count: 1 });
    const started = Date.now();
    const check = failed(await checkConnection(e.origin, tokens.rw, { ...asEngine(), timeoutMs: 400 }));
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(check.code).toBe("unreachable");
    expect(check.detail).toBe(
      `Could not reach the server at ${e.origin}: it did not answer within 400 ms. Check the URL and that the server is up; a firewall may be dropping the connection.`,
    );
  });

  it("reports a reset connection as unreachable", async () => {
    await injectFault(e, { kind: "reset", path: "^/v1/sandboxes/limits$", count: 1 });
    const check = failed(await checkConnection(e.origin, tokens.rw, asEngine()));
    expect(check.code).toBe("unreachable");
    expect(check.detail).toMatch(/connection|socket|reset/i);
  });

  it("refuses the engine's loopback address when it is not the configured local engine", async () => {
    const check = failed(await checkConnection(e.origin, tokens.rw, { localEngineOrigins: ["http://127.0.0.1:1"] }));
    expect(check.code).toBe("private_address");
    expect(check.detail).toMatch(/is a loopback address/);
  });
});

describe("checkConnection without a server", () => {
  it("reports a closed port as unreachable, naming the cause", async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const origin = `http://127.0.0.1:${port}`;
    const check = failed(await checkConnection(origin, "ork_abcdefghijklmnop", { localEngineOrigins: [origin] }));
    expect(check.code).toBe("unreachable");
    expect(check.detail).toMatch(
      new RegExp(
        `^Could not reach the server at ${origin.replace(/\./g, "\\.")} \\(ECONNREFUSED.*\\): the connection was refused: nothing is listening on that host and port\\. Check the port and that the server is running\\.$`,
      ),
    );
  });

  it("returns the URL's own refusal without sending anything", async () => {
    const noDns: Resolver = async (h) => {
      throw new Error(`unexpected lookup ${h}`);
    };
    expect(await checkConnection("ftp://x", "ork_abcdefghijkl", { resolver: noDns })).toMatchObject({
      ok: false,
      code: "invalid_url",
    });
    expect(await checkConnection("https://10.1.2.3", "ork_abcdefghijkl", { resolver: noDns })).toMatchObject({
      ok: false,
      code: "private_address",
    });
    const missing: Resolver = async () => {
      throw Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" });
    };
    expect(await checkConnection("https://nope.example", "ork_abcdefghijkl", { resolver: missing })).toMatchObject({
      ok: false,
      code: "unresolvable_host",
    });
  });

  it("refuses a token with spaces or line breaks before sending it", async () => {
    let called = false;
    const check = await checkConnection("http://127.0.0.1:8787", "ork_abc def", {
      localEngineOrigins: ["http://127.0.0.1:8787"],
      fetch: async () => {
        called = true;
        return new Response("{}");
      },
    });
    expect(check).toMatchObject({ ok: false, code: "bad_token" });
    expect(called).toBe(false);
  });

  it("maps connect-time refusals of the guarded fetch (DNS rebinding) to private_address", async () => {
    let n = 0;
    const rebinding: Resolver = async () => [{ address: n++ === 0 ? "93.184.216.34" : "10.0.0.9", family: 4 }];
    const safe = await assertSafeBaseUrl("https://api.rebind.example", { resolver: rebinding, localEngineOrigins: [] });
    const check = failed(await checkConnection(safe, "ork_abcdefghijklmnop", { resolver: rebinding }));
    expect(check.code).toBe("private_address");
    expect(check.detail).toMatch(/resolves to 10\.0\.0\.9, a private \(RFC 1918\) address/);
  });
});

describe("checkConnection over TLS (guarded fetch, self-signed certificate)", () => {
  let dir: string;
  let server: https.Server;
  let port: number;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-tls-"));
    const pem = selfSignedCert(dir, ["api.tls.test"]);
    server = https.createServer({ key: fs.readFileSync(pem.key), cert: fs.readFileSync(pem.cert) }, (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ plan: "payg" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("reports an untrusted certificate as unreachable with a TLS hint", async () => {
    // api.tls.test "resolves" to a public address for the URL check; the test policy of the
    // guarded fetch then lets it connect to the server on 127.0.0.1 under that name.
    const safe = await assertSafeBaseUrl(`https://api.tls.test:${port}`, {
      resolver: async () => [{ address: "93.184.216.34", family: 4 }],
      localEngineOrigins: [],
    });
    const f = createGuardedFetch({
      resolver: async () => [{ address: "127.0.0.1", family: 4 }],
      isAllowed: (a) => a === "127.0.0.1",
    });
    const check = failed(await checkConnection(safe, "ork_abcdefghijklmnop", { fetch: f }));
    expect(check.code).toBe("unreachable");
    expect(check.detail).toMatch(
      /^Could not reach the server at https:\/\/api\.tls\.test:\d+ \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)[^)]*\): the TLS handshake failed: the server's certificate is not trusted or does not match the host name\. Use the API's public https:\/\/ URL\.$/,
    );
  });
});

describe("checkConnection against servers that are not orkestr", () => {
  let server: http.Server;
  let origin: string;
  const routes: Record<string, (res: http.ServerResponse) => void> = {};

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const rest = (req.url ?? "").replace(/^\/[a-z]+/, "");
      const handler = routes[(req.url ?? "").split("/")[1] ?? ""];
      if (handler && (rest === "/v1/sandboxes/limits" || rest === "/v1/limits")) return handler(res);
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    routes.html = (res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!doctype html><title>Welcome</title><p>hello</p>");
    };
    routes.foreign = (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ status: "ok", version: "2.0" }));
    };
    routes.array = (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("[1,2,3]");
    };
    routes.mismatch = (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ plan: 42 }));
    };
    routes.gateway = (res) => {
      res.writeHead(504, { "content-type": "text/html" });
      res.end("<html><head><title>504 Gateway Time-out</title></head></html>");
    };
    routes.teapot = (res) => {
      res.writeHead(418, { "content-type": "text/plain" });
      res.end("I'm a teapot");
    };
    routes.moved = (res) => {
      res.writeHead(301, { location: "https://api.orkestr.eu/v1/sandboxes/limits" });
      res.end();
    };
    routes.limited = (res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "7" });
      res.end(JSON.stringify({ detail: "Slow down", code: "rate_limited" }));
    };
    routes.minimal = (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ plan: "free", allowed_sizes: ["small"] }));
    };
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const check = (prefix: string) =>
    checkConnection(`${origin}/${prefix}`, "ork_abcdefghijklmnop", { localEngineOrigins: [origin] });

  it("HTML with 200 → not_orkestr", async () => {
    const c = failed(await check("html"));
    expect(c.code).toBe("not_orkestr");
    expect(c.detail).toMatch(
      /\/html does not look like an orkestr v1 API \(GET .*\/html\/v1\/sandboxes\/limits answered 200 with a response that is not JSON \(text\/html\)\)/,
    );
  });

  it("JSON without any limits field → not_orkestr", async () => {
    const c = failed(await check("foreign"));
    expect(c.code).toBe("not_orkestr");
    expect(c.detail).toMatch(/answered 200 with JSON that has none of the limits fields/);
  });

  it("JSON that is not an object, or does not match the schema → not_orkestr", async () => {
    expect(failed(await check("array")).code).toBe("not_orkestr");
    const c = failed(await check("mismatch"));
    expect(c.code).toBe("not_orkestr");
    expect(c.detail).toMatch(/answered 200 with JSON that does not match the limits schema \(plan/);
  });

  it("non-JSON 404 on both paths → not_orkestr", async () => {
    const c = failed(await check("nothing"));
    expect(c).toMatchObject({ code: "not_orkestr", status: 404 });
    expect(c.detail).toMatch(/answered 404 Not Found without JSON/);
  });

  it("other non-JSON 4xx → not_orkestr with the status", async () => {
    expect(failed(await check("teapot"))).toMatchObject({ code: "not_orkestr", status: 418 });
  });

  it("a redirect → not_orkestr naming the target", async () => {
    const c = failed(await check("moved"));
    expect(c.code).toBe("not_orkestr");
    expect(c.detail).toMatch(
      /answered a redirect \(301\) to https:\/\/api\.orkestr\.eu\/v1\/sandboxes\/limits; if that is the API, use it as the base URL/,
    );
  });

  it("an HTML 504 from a proxy → upstream_error with the status", async () => {
    const c = failed(await check("gateway"));
    expect(c).toMatchObject({ code: "upstream_error", status: 504 });
    expect(c.detail).toMatch(/answered 504 Gateway Timeout\. It is having trouble/);
  });

  it("429 → upstream_error with when to try again", async () => {
    const c = failed(await check("limited"));
    expect(c).toMatchObject({ code: "upstream_error", status: 429 });
    expect(c.detail).toMatch(/answered 429 Too Many Requests \(rate_limited: Slow down\)\. Try again in 7 s\./);
  });

  it("a minimal limits answer (no engine block) → ok without engine", async () => {
    const c = await check("minimal");
    expect(c).toMatchObject({ ok: true, plan: "free", regions: [] });
    expect("engine" in c).toBe(false);
  });
});
