import "server-only";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as localEngine } from "../../app/api/connections/local-engine/route";
import { createApiFastPath, findApiRoutes, matcher } from "../../lib/server/api-fast-path";
import { testBackends } from "../../lib/server/db/test-backends";
import { createConsoleServer, createFrontDoor, type FrontDoor } from "../../lib/server/front-door";
import { readBodyText } from "../../lib/server/route";
import { useLocalEngine } from "./engine-harness";
import { makeUser, noParams, ORIGIN, request, sessionCookie, useConsoleDb } from "./helpers";

// The console server calls the /api/v1/** route handlers itself (lib/server/api-fast-path.ts): the
// same route files and route() checks as through Next, over a real socket.

const API_DIR = path.resolve(__dirname, "../../app/api/v1");
const routes = findApiRoutes(API_DIR, "/api/v1");

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

function send(
  port: number,
  method: string,
  p: string,
  /** `body` is sent as JSON, `raw` as it is. */
  opts: { headers?: Record<string, string | string[]>; body?: unknown; raw?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    const req = http.request({
      host: "127.0.0.1",
      port,
      method,
      path: p,
      headers: {
        host: "baton.test",
        ...(opts.body === undefined ? {} : { "content-type": "application/json" }),
        ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }),
        ...opts.headers,
      },
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A front door that admits everything: what the handlers check themselves, with nothing before them. */
const openDoor: FrontDoor = { request: () => false, upgrade: () => false, trustedProxies: 0, hosts: "*" };

describe("the API route table", () => {
  it("has every route file under app/api/v1, a static segment winning over a parameter", () => {
    const files = (fs.readdirSync(API_DIR, { recursive: true }) as string[]).filter((f) => /(^|\/)route\.ts$/.test(f));
    expect(routes.map((r) => r.file).sort()).toEqual(files.map((f) => path.join(API_DIR, f)).sort());
    const match = matcher(routes);
    expect(match("/api/v1/sandboxes/limits")?.route.pattern).toBe("/api/v1/sandboxes/limits");
    expect(match("/api/v1/sandboxes/sbx_1")).toMatchObject({
      route: { pattern: "/api/v1/sandboxes/[id]" },
      params: { id: "sbx_1" },
    });
    expect(match("/api/v1/webhooks/wh_1/deliveries/d%201/redeliver")).toMatchObject({
      route: { pattern: "/api/v1/webhooks/[id]/deliveries/[dlv]/redeliver" },
      params: { id: "wh_1", dlv: "d 1" },
    });
    // Next's to answer: no such route, a trailing slash (its redirect), an undecodable segment.
    expect(match("/api/v1/nothing-here")).toBeNull();
    expect(match("/api/v1/sandboxes/")).toBeNull();
    expect(match("/api/v1/sandboxes/%E0%A4%A/metrics")).toBeNull();
  });

  it("has the MCP endpoint too, at /api/mcp and nowhere else", () => {
    const mcp = findApiRoutes(path.resolve(__dirname, "../../app/api/mcp"), "/api/mcp");
    expect(mcp.map((r) => r.pattern)).toEqual(["/api/mcp"]);
    const match = matcher([...routes, ...mcp]);
    expect(match("/api/mcp")?.route.file).toBe(path.resolve(__dirname, "../../app/api/mcp/route.ts"));
    expect(match("/api/mcp/")).toBeNull();
    expect(match("/api/mcpx")).toBeNull();
  });

  it("has handlers that read request bodies only as the fast path keeps them (route(), requestBody())", () => {
    // A body the fast path read whole is beside the Request, not in it (lib/server/request-bytes.ts):
    // a handler reading req.body, req.json() or the like would see none.
    const direct = /\breq(?:uest)?\.(?:body\b|json\(|text\(|arrayBuffer\(|formData\(|blob\(|bytes\()/;
    const offenders = routes
      .filter((r) => direct.test(fs.readFileSync(r.file, "utf8")))
      .map((r) => path.relative(API_DIR, r.file));
    expect(offenders).toEqual([]);
  });
});

/** A console server whose fast path serves one route file, `/api/v1/<name>`, with `handler`. */
async function serveOne(name: string, handler: (req: Request) => Promise<Response>): Promise<http.Server> {
  const fastPath = createApiFastPath({
    routes: [
      {
        pattern: `/api/v1/${name}`,
        file: name,
        segments: ["api", "v1", name].map((value) => ({ kind: "static" as const, value })),
      },
    ],
    load: async () => ({ GET: handler, POST: handler }),
  });
  const server = createConsoleServer({
    frontDoor: openDoor,
    handle: (_req, res) => res.writeHead(500).end(),
    upgrade: () => false,
    api: (req, res) => fastPath.handle(req, res),
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

describe("the console server", () => {
  it("offers the fast path /api/v1/** and /api/mcp, and leaves every other path to Next", async () => {
    const offered: string[] = [];
    const server = createConsoleServer({
      frontDoor: openDoor,
      handle: (_req, res) => res.writeHead(299).end(),
      upgrade: () => false,
      api: async (req, res) => {
        offered.push(req.url ?? "");
        res.writeHead(298).end();
        return true;
      },
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const statusOf = async (p: string) => (await send(port, "GET", p)).status;
      expect(await statusOf("/api/v1/sandboxes")).toBe(298);
      expect(await statusOf("/api/mcp")).toBe(298);
      expect(await statusOf("/api/mcp?x=1")).toBe(298);
      expect(await statusOf("/api/mcpx")).toBe(299);
      expect(await statusOf("/api/me")).toBe(299);
      expect(await statusOf("/api/v1")).toBe(299);
      expect(offered).toEqual(["/api/v1/sandboxes", "/api/mcp", "/api/mcp?x=1"]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe("the fast path's answers", () => {
  it("add the console's security headers, but never over the handler's own", async () => {
    const handler = async () =>
      new Response("file bytes", {
        headers: {
          "content-type": "application/octet-stream",
          "content-security-policy": "default-src 'none'; sandbox",
        },
      });
    const server = await serveOne("raw", handler);
    try {
      const res = await send((server.address() as AddressInfo).port, "GET", "/api/v1/raw");
      expect(res.status).toBe(200);
      expect(res.text).toBe("file bytes");
      expect(res.headers["content-security-policy"]).toBe("default-src 'none'; sandbox");
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("give the handler the request's headers, URL and method as Next would, and a live abort signal", async () => {
    type Seen = { url: string; method: string; headers: [string, string][]; cookies: string[]; signal: AbortSignal };
    let seen: Seen | null = null;
    const server = await serveOne("echo", async (req) => {
      seen = {
        url: req.url,
        method: req.method,
        headers: [...req.headers],
        cookies: req.headers.getSetCookie(),
        signal: req.signal,
      };
      return new Response(null, { status: 204 });
    });
    try {
      // A header Node keeps as a list (a repeated Set-Cookie) reaches the handler value by value.
      const listed = await send((server.address() as AddressInfo).port, "GET", "/api/v1/echo", {
        headers: { "set-cookie": ["a=1", "b=2"], "x-one": "1" },
      });
      expect(listed.status).toBe(204);
      expect((seen as Seen | null)?.cookies).toEqual(["a=1", "b=2"]);
      expect(new Map((seen as Seen | null)?.headers).get("x-one")).toBe("1");

      const res = await send((server.address() as AddressInfo).port, "GET", "/api/v1/echo?a=1", {
        // A Latin-1 byte (obs-text) passes as Next passes it.
        headers: { "x-one": "1", "x-latin": "caf\u00e9", cookie: "a=1; b=2" },
      });
      expect(res.status).toBe(204);
      const got = seen as Seen | null;
      if (!got) throw new Error("the handler did not run");
      expect(got.url).toBe("http://baton.test/api/v1/echo?a=1");
      expect(got.method).toBe("GET");
      const headers = new Map(got.headers);
      expect(headers.get("host")).toBe("baton.test");
      expect(headers.get("x-one")).toBe("1");
      expect(headers.get("x-latin")).toBe("caf\u00e9");
      expect(headers.get("cookie")).toBe("a=1; b=2");
      expect(got.signal).toBeInstanceOf(AbortSignal);
      expect(got.signal.aborted).toBe(false);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("abort the handler's request and cancel its stream when the client leaves before the answer begins", async () => {
    let aborted = false;
    let cancelled = false;
    let ticks = 0;
    let handlerDone!: () => void;
    const handlerFinished = new Promise<void>((r) => (handlerDone = r));
    // A handler still working (a session check, a first upstream read) when the client goes away,
    // which then returns an endless stream: the live stream, an event feed.
    const handler = async (req: Request) => {
      req.signal.addEventListener("abort", () => (aborted = true));
      await new Promise((r) => setTimeout(r, 200));
      handlerDone();
      let timer: ReturnType<typeof setInterval>;
      return new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            timer = setInterval(() => {
              ticks++;
              controller.enqueue(new TextEncoder().encode("data: x\n\n"));
            }, 10);
          },
          cancel() {
            cancelled = true;
            clearInterval(timer);
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    };
    const server = await serveOne("feed", handler);
    try {
      const req = http.request({
        host: "127.0.0.1",
        port: (server.address() as AddressInfo).port,
        path: "/api/v1/feed",
        headers: { host: "baton.test" },
      });
      req.on("error", () => undefined);
      req.end();
      await new Promise((r) => setTimeout(r, 50));
      req.destroy();
      await handlerFinished;
      await new Promise((r) => setTimeout(r, 100));
      expect(aborted).toBe(true);
      expect(cancelled).toBe(true);
      const after = ticks;
      await new Promise((r) => setTimeout(r, 100));
      expect(ticks).toBe(after);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe("the fast path's request bodies", () => {
  const echo = async (req: Request) =>
    new Response(await readBodyText(req, 1024 * 1024), { headers: { "content-type": "text/plain" } });

  async function post(port: number, parts: string[], headers: Record<string, string> = {}): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = http.request({
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/api/v1/echo",
        headers: { host: "baton.test", ...headers },
      });
      req.on("response", (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (text += d));
        res.on("end", () => resolve(text));
      });
      req.on("error", reject);
      for (const p of parts.slice(0, -1)) req.write(p);
      req.end(parts.at(-1));
    });
  }

  it("reach the handler whole, with a declared length or chunked", async () => {
    const server = await serveOne("echo", echo);
    const port = (server.address() as AddressInfo).port;
    try {
      const small = JSON.stringify({ command: "echo hi" });
      expect(await post(port, [small], { "content-length": String(Buffer.byteLength(small)) })).toBe(small);
      // Longer than one socket read, in two writes.
      const big = "x".repeat(200 * 1024);
      expect(await post(port, [big.slice(0, 1000), big.slice(1000)], { "content-length": String(big.length) })).toBe(
        big,
      );
      // No length (chunked).
      expect(await post(port, ['{"a":', "1}"])).toBe('{"a":1}');
      // A small declared body in two writes (read whole before the handler runs).
      expect(await post(port, ['{"a":', "2}"], { "content-length": "7" })).toBe('{"a":2}');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("never run the handler for a declared body the client gave up on halfway", async () => {
    let ran = 0;
    const server = await serveOne("echo", async (req) => {
      ran++;
      return echo(req);
    });
    const port = (server.address() as AddressInfo).port;
    try {
      const req = http.request({
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/api/v1/echo",
        headers: { host: "baton.test", "content-length": "100" },
      });
      req.on("error", () => undefined);
      req.write('{"half":');
      await new Promise((r) => setTimeout(r, 100));
      req.destroy();
      await new Promise((r) => setTimeout(r, 100));
      expect(ran).toBe(0);
      // The server is fine after it.
      expect(await post(port, ["{}"], { "content-length": "2" })).toBe("{}");
      expect(ran).toBe(1);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe("the fast path's JSON answers", () => {
  it("a jsonResponse() goes out as its own bytes with their length; a read one as its body", async () => {
    const { jsonResponse } = await import("../../lib/server/json-response");
    const value = { id: "sbx_1", note: "ünïcode ✓", list: [1, 2, 3] };
    let readFirst = false;
    const server = await serveOne("doc", async () => {
      const response = jsonResponse(value, { status: 201, headers: { "x-next-cursor": "c2" } });
      if (!readFirst) return response;
      // Someone read it already (a wrapper): the fast path must not send the remembered bytes as
      // if the body were still there, and must not hang on a used body either.
      const copy = jsonResponse(value);
      await copy.text();
      return new Response(JSON.stringify(value), { headers: { "content-type": "application/json" } });
    });
    const port = (server.address() as AddressInfo).port;
    try {
      const res = await send(port, "GET", "/api/v1/doc");
      expect(res.status).toBe(201);
      expect(JSON.parse(res.text)).toEqual(value);
      expect(res.headers["content-length"]).toBe(String(Buffer.byteLength(JSON.stringify(value))));
      expect(res.headers["content-type"]).toBe("application/json");
      expect(res.headers["x-next-cursor"]).toBe("c2");
      expect(res.headers["transfer-encoding"]).toBeUndefined();
      readFirst = true;
      expect(JSON.parse((await send(port, "GET", "/api/v1/doc")).text)).toEqual(value);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("knownJsonBytes forgets a response whose body was read", async () => {
    const { jsonResponse, knownJsonBytes } = await import("../../lib/server/json-response");
    const response = jsonResponse([1]);
    expect(knownJsonBytes(response)?.toString()).toBe("[1]");
    expect(await response.text()).toBe("[1]");
    expect(knownJsonBytes(response)).toBeUndefined();
  });
});

describe.each(testBackends)("the /api/v1 fast path on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));
  const nextSaw: string[] = [];
  const servers: http.Server[] = [];
  let port = 0;
  let openPort = 0;

  const start = async (frontDoor: FrontDoor) => {
    const fastPath = createApiFastPath({ routes, load: (file) => import(file) as Promise<Record<string, unknown>> });
    const server = createConsoleServer({
      frontDoor,
      // Stands in for Next: records what it was handed.
      handle: (req, res) => {
        nextSaw.push(`${req.method} ${req.url}`);
        res.writeHead(299).end();
      },
      upgrade: () => false,
      api: (req, res) => fastPath.handle(req, res),
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  };

  beforeAll(async () => {
    port = await start(createFrontDoor({ trustedProxies: 0 }));
    openPort = await start(openDoor);
  });
  afterAll(async () => {
    for (const s of servers) await new Promise((r) => s.close(r));
  });

  async function connected() {
    const { user } = await makeUser(ctx.db(), "owner");
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const res = await localEngine(request("/api/connections/local-engine", { method: "POST", cookie }), noParams);
    expect(res.status).toBe(201);
    return cookie;
  }

  it("needs a session, answers {detail, code} with the console's security headers, without Next", async () => {
    nextSaw.length = 0;
    const res = await send(port, "GET", "/api/v1/sandboxes");
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text)).toMatchObject({ code: "unauthorized" });
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["x-frame-options"]).toBe("DENY");
    expect(res.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(nextSaw).toEqual([]);
  });

  it("keeps the handlers' own Host and Origin checks, with no front door before them", async () => {
    const cookie = await connected();
    const evilHost = await send(openPort, "GET", "/api/v1/sandboxes", { headers: { host: "evil.example", cookie } });
    expect(evilHost.status).toBe(421);
    expect(JSON.parse(evilHost.text)).toMatchObject({ code: "host_not_allowed" });
    const crossSite = await send(openPort, "POST", "/api/v1/sandboxes/sbx_1/exec", {
      headers: { cookie, origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      body: { command: "true" },
    });
    expect(crossSite.status).toBe(403);
    expect(JSON.parse(crossSite.text)).toMatchObject({ code: "bad_origin" });
    // And the front door still refuses a foreign Host before anything else.
    expect((await send(port, "GET", "/api/v1/sandboxes", { headers: { host: "evil.example", cookie } })).status).toBe(
      421,
    );
  });

  it("proxies to the engine: params, bodies in, streams out", async () => {
    const cookie = await connected();
    const same = { cookie, origin: ORIGIN, "sec-fetch-site": "same-origin" };
    const list = await send(port, "GET", "/api/v1/sandboxes", { headers: same });
    expect(list.status).toBe(200);
    expect(Array.isArray(JSON.parse(list.text))).toBe(true);
    expect((await send(port, "GET", "/api/v1/sandboxes/limits", { headers: same })).status).toBe(200);
    const missing = await send(port, "GET", "/api/v1/sandboxes/sbx_nothere", { headers: same });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toMatchObject({ code: "sandbox_not_found" });

    const created = await send(port, "POST", "/api/v1/sandboxes", { headers: same, body: { template: "python-3.12" } });
    expect(created.status).toBe(201);
    const id = (JSON.parse(created.text) as { id: string }).id;
    try {
      const ran = await send(port, "POST", `/api/v1/sandboxes/${id}/exec`, {
        headers: same,
        body: { command: "echo fast" },
      });
      expect(ran.status).toBe(200);
      expect(JSON.parse(ran.text)).toMatchObject({ exit_code: 0, stdout: "fast\n" });
      // A small raw upload: its bytes were read before the handler, and still reach the file.
      const upload = await send(port, "PUT", `/api/v1/sandboxes/${id}/files/raw?path=/tmp/small.txt`, {
        headers: { ...same, "content-type": "application/octet-stream" },
        raw: "small file",
      });
      expect(upload.status, upload.text).toBe(201);
      expect(JSON.parse(upload.text)).toMatchObject({ path: "/tmp/small.txt", size: 10 });
      const read = await send(port, "GET", `/api/v1/sandboxes/${id}/files/raw?path=/tmp/small.txt`, { headers: same });
      expect(read.text).toBe("small file");
      const streamed = await send(port, "POST", `/api/v1/sandboxes/${id}/exec/stream`, {
        headers: { ...same, accept: "text/event-stream" },
        body: { command: "echo streamed" },
      });
      expect(streamed.status).toBe(200);
      expect(streamed.headers["content-type"]).toContain("text/event-stream");
      expect(streamed.text).toContain("streamed");
      expect(streamed.text).toContain('"is_final":true');
    } finally {
      await send(port, "DELETE", `/api/v1/sandboxes/${id}`, { headers: same });
    }
  });

  it("hands Next what no route file's handler serves", async () => {
    nextSaw.length = 0;
    await send(port, "PUT", "/api/v1/sandboxes"); // not exported: Next's 405
    await send(port, "OPTIONS", "/api/v1/sandboxes"); // Next's automatic OPTIONS
    await send(port, "GET", "/api/v1/no-such-thing");
    await send(port, "GET", "/api/v1/sandboxes/"); // Next's trailing-slash redirect
    await send(port, "GET", "/api/me"); // not under /api/v1
    expect(nextSaw).toEqual([
      "PUT /api/v1/sandboxes",
      "OPTIONS /api/v1/sandboxes",
      "GET /api/v1/no-such-thing",
      "GET /api/v1/sandboxes/",
      "GET /api/me",
    ]);
  });
});
