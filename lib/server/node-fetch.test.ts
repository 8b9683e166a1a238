import "server-only";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNodeFetch } from "./node-fetch";

// The proxy's way to its upstreams: keep-alive (one connection reused call after call), small
// answers read whole, streams passed on as they come.

describe("createNodeFetch", () => {
  let server: http.Server;
  let origin = "";
  let connections = 0;
  let releaseStream: () => void = () => undefined;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/json") {
        const body = JSON.stringify({ ok: true, method: req.method, auth: req.headers.authorization ?? null });
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        return res.end(body);
      }
      if (req.url === "/echo") {
        let got = "";
        req.on("data", (d: Buffer) => (got += d.toString()));
        req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end(got));
        return;
      }
      if (req.url === "/stream") {
        // No length: the first event must arrive while the stream is still open.
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("data: first\n\n");
        releaseStream = () => res.end("data: last\n\n");
        return;
      }
      if (req.url === "/truncated") {
        res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
        res.write('{"cut":');
        setImmediate(() => res.socket?.destroy());
        return;
      }
      res.writeHead(404).end();
    });
    server.on("connection", () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("reuses one connection for call after call, and reads a small answer whole", async () => {
    const fetch = createNodeFetch();
    const before = connections;
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${origin}/json`, { headers: { authorization: "Bearer ork_x" } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true, method: "GET", auth: "Bearer ork_x" });
    }
    expect(connections - before).toBe(1);
  });

  it("sends request bodies, strings and streams alike", async () => {
    const fetch = createNodeFetch();
    expect(await (await fetch(`${origin}/echo`, { method: "POST", body: "hello" })).text()).toBe("hello");
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode("str"));
        c.enqueue(new TextEncoder().encode("eam"));
        c.close();
      },
    });
    const init = { method: "POST", body: stream, duplex: "half" } as RequestInit;
    expect(await (await fetch(`${origin}/echo`, init)).text()).toBe("stream");
  });

  it("passes a stream on as it comes", async () => {
    const res = await createNodeFetch()(`${origin}/stream`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: first\n\n");
    releaseStream();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toBe("data: last\n\n");
  });

  it("fails like fetch when the answer is cut off or the call is aborted", async () => {
    const fetch = createNodeFetch();
    await expect(fetch(`${origin}/truncated`)).rejects.toThrow(TypeError);
    const controller = new AbortController();
    const pending = fetch(`${origin}/stream`, { signal: controller.signal });
    const res = await pending;
    controller.abort(new Error("stop"));
    await expect(res.text()).rejects.toThrow();
    releaseStream();
    const refused = createNodeFetch({ refuse: () => new Error("not there") });
    await expect(refused(`${origin}/json`)).rejects.toMatchObject({ cause: { message: "not there" } });
  });
});

describe("createNodeFetch on a pooled socket the upstream closed", () => {
  // An upstream that drops a kept-alive connection when the next request arrives on it (what a
  // server's idle keep-alive timeout looks like when it fires just as the request is written).
  let server: http.Server;
  let origin = "";
  const served = new WeakMap<object, number>();
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const n = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, n);
      if (n > 1) return req.socket.destroy();
      res.writeHead(200, { "content-type": "application/json", "content-length": "2" }).end("{}");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("sends an idempotent request again on a fresh socket, once", async () => {
    const f = createNodeFetch();
    expect((await f(`${origin}/a`)).status).toBe(200);
    expect((await f(`${origin}/b`)).status).toBe(200);
    expect((await f(`${origin}/c`, { method: "DELETE" })).status).toBe(200);
  });

  it("never sends a POST twice: its failure is the caller's to explain", async () => {
    const f = createNodeFetch();
    expect((await f(`${origin}/a`)).status).toBe(200);
    await expect(f(`${origin}/b`, { method: "POST", body: "{}" })).rejects.toThrow(/fetch failed/);
  });
});
