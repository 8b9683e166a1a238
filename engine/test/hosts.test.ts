import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiHostAllowed } from "../src/lib/api-host.js";
import { createSandbox, startEngine, type EngineHandle } from "./helpers/engine.js";
import { raw, rawRequest, type RawResponse } from "./helpers/raw-http.js";

/**
 * DNS rebinding defence: the engine answers the API only under its own names (127.0.0.1, localhost
 * and [::1] with its port, plus ORKESTR_ENGINE_ALLOWED_HOSTS) and previews only under
 * *.sbx.localhost. A page on evil.test whose name now resolves to 127.0.0.1 sends
 * `Host: evil.test:<port>` and must get 421, for plain requests and WebSocket upgrades alike.
 */
let e: EngineHandle;
let port: number;
let id: string;
beforeAll(async () => {
  e = await startEngine({ env: { ORKESTR_ENGINE_ALLOWED_HOSTS: "Baton.Internal, proxy.test:8443" } });
  port = Number(new URL(e.origin).port);
  id = await createSandbox(e);
});
afterAll(async () => {
  await e?.stop();
});

const bearer = () => ({ Authorization: `Bearer ${e.token}` });

function expectMisdirected(r: RawResponse, what: string): void {
  expect(r.status, what).toBe(421);
  expect(r.headers["content-type"], what).toMatch(/^application\/json/);
  expect(typeof r.json?.detail, `${what}: ${r.text}`).toBe("string");
  expect(r.json.code, what).toBe("host_not_allowed");
}

/** A WebSocket handshake as raw bytes (the server answers an upgrade it refuses with a normal response). */
function upgrade(target: string, host: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const lines = [
    `GET ${target} HTTP/1.1`,
    `Host: ${host}`,
    "Connection: Upgrade",
    "Upgrade: websocket",
    "Sec-WebSocket-Version: 13",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return rawRequest(port, lines.join("\r\n"));
}

describe("Host allow-list", () => {
  it("refuses foreign hosts with 421 on every API path, even with valid credentials", async () => {
    const foreign = [
      `evil.test:${port}`,
      "evil.test",
      `127.0.0.1.evil.test:${port}`,
      `localhost.evil.test:${port}`,
      `localhost:${port}.evil.test`,
      `sbx.localhost:${port}`,
      `3000-${id.toLowerCase()}.sbx.localhost.evil.test:${port}`,
      // Our names, but not with the port we listen on.
      "127.0.0.1",
      "localhost",
      `127.0.0.1:${port + 1}`,
      `localhost.:${port}`,
      `[::1]`,
      // ALLOWED_HOSTS entries: proxy.test only with its port.
      "proxy.test",
      "proxy.test:8444",
    ];
    for (const host of foreign) {
      expectMisdirected(
        await raw(port, "GET", "/v1/sandboxes", { host, headers: bearer() }),
        `GET /v1/sandboxes as ${host}`,
      );
      expectMisdirected(await raw(port, "GET", "/healthz", { host }), `GET /healthz as ${host}`);
    }
    const evil = `evil.test:${port}`;
    expectMisdirected(
      await raw(port, "POST", "/_admin/tokens", {
        host: evil,
        headers: { "x-baton-bootstrap": e.bootstrap!, "content-type": "application/json" },
        body: "{}",
      }),
      "mint",
    );
    expectMisdirected(
      await raw(port, "POST", `/v1/sandboxes/${id}/exec`, {
        host: evil,
        headers: { ...bearer(), "content-type": "application/json" },
        body: '{"command":"true"}',
      }),
      "exec",
    );
    expectMisdirected(await raw(port, "GET", "/no/such/route", { host: evil }), "404 path");
    // An absolute-form target names the host too.
    expectMisdirected(await raw(port, "GET", "http://evil.test/v1/sandboxes", { headers: bearer() }), "absolute-form");
  });

  it("refuses a missing or repeated Host with a 400 in the contract shape", async () => {
    for (const [what, head] of [
      ["no Host", "GET /healthz HTTP/1.1\r\nConnection: close"],
      ["HTTP/1.0 without Host", "GET /healthz HTTP/1.0"],
      ["two Hosts", `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nHost: evil.test\r\nConnection: close`],
    ] as const) {
      const r = await rawRequest(port, head);
      expect(r.status, what).toBe(400);
      expect(r.json?.code, `${what}: ${r.text}`).toBe("bad_request");
      expect(typeof r.json.detail, what).toBe("string");
    }
  });

  it("answers its own names with its port, and ORKESTR_ENGINE_ALLOWED_HOSTS", async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LocalHost:${port}`,
      `[::1]:${port}`,
      "baton.internal",
      `baton.internal:${port}`,
      "proxy.test:8443",
    ]) {
      const r = await raw(port, "GET", "/v1/sandboxes", { host, headers: bearer() });
      expect(r.status, host).toBe(200);
    }
    expect((await raw(port, "GET", "/healthz", { host: `localhost:${port}` })).status).toBe(200);
    // Presigned URLs are built on the Host the caller used, so they only ever name allowed hosts.
    const ps = await raw(port, "POST", `/v1/sandboxes/${id}/files/presign-download`, {
      host: "baton.internal",
      headers: { ...bearer(), "content-type": "application/json" },
      body: '{"path":"/workspace/x"}',
    });
    expect(ps.status).toBe(200);
    expect(new URL(ps.json.url as string).host).toBe("baton.internal");
  });

  it("matches names and ports as HTTP means them (a Host without a port is port 80)", () => {
    const on =
      (port: number, host = "127.0.0.1", allowedHosts: string[] = []) =>
      (h: string) =>
        apiHostAllowed({ port, host, allowedHosts }, h);
    expect(on(80)("localhost")).toBe(true);
    expect(on(80)("127.0.0.1:80")).toBe(true);
    expect(on(80)("localhost:8787")).toBe(false);
    expect(on(8787)("localhost")).toBe(false);
    // The address it is bound to is one of its names; a wildcard bind is not.
    expect(on(8787, "10.1.2.3")("10.1.2.3:8787")).toBe(true);
    expect(on(8787, "fd00::1")("[fd00::1]:8787")).toBe(true);
    expect(on(8787, "0.0.0.0")("0.0.0.0:8787")).toBe(false);
    expect(on(8787, "127.0.0.1", ["proxy.test:80"])("proxy.test")).toBe(true);
    for (const bad of [
      "",
      ":8787",
      "127.0.0.1:8787:1",
      "::1:8787",
      "[::1",
      "localhost:8787/x",
      "user@localhost:8787",
      "localhost :8787",
    ]) {
      expect(on(8787)(bad), bad).toBe(false);
    }
  });

  it("refuses WebSocket upgrades for foreign hosts: the PTY route and any other path", async () => {
    const ws = `/v1/sandboxes/${id}/pty/pty_nope/ws`;
    expectMisdirected(await upgrade(ws, `evil.test:${port}`, bearer()), "pty upgrade");
    expectMisdirected(await upgrade("/hmr", `evil.test:${port}`), "other upgrade");
    expectMisdirected(
      await upgrade("/", `3000-${id.toLowerCase()}.sbx.localhost.evil.test:${port}`),
      "preview look-alike upgrade",
    );
    // The same upgrade under our own name reaches the route (and its auth, then the session lookup).
    const own = await upgrade(ws, `127.0.0.1:${port}`, bearer());
    expect(own.status).toBe(404);
    expect(own.json.code).toBe("session_not_found");
    expect((await upgrade(ws, `localhost:${port}`)).status).toBe(401);
  });

  it("still hands preview hosts to the preview proxy, HTTP and upgrade, with any port", async () => {
    // No sandbox "nope": the proxy's own 404 proves the request reached it and not the 421 check.
    for (const host of [`3000-nope.sbx.localhost:${port}`, "3000-nope.sbx.localhost", "3000-NOPE.SBX.LOCALHOST:80"]) {
      const r = await raw(port, "GET", "/", { host, headers: { accept: "application/json" } });
      expect(r.status, host).toBe(404);
      expect(r.json?.code, host).toBe("sandbox_not_found");
      const u = await upgrade("/hmr", host, { accept: "application/json" });
      expect(u.status, host).toBe(404);
      expect(u.json?.code, host).toBe("sandbox_not_found");
    }
  });
});
