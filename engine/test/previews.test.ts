import fs from "node:fs";
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cgroupNameOf, createSandbox, enginePath, exec, startEngine, type EngineHandle } from "./helpers/engine.js";
import {
  enginePort,
  hostRequest,
  openPreviewSocket,
  previewHostOf,
  roundTrip,
  serveInSandbox,
} from "./helpers/previews.js";
import { until } from "./helpers/async.js";

/**
 * Preview URLs through a real engine: http://<port>-<id>.sbx.localhost:<engine port>, reached on
 * 127.0.0.1 with an explicit Host header. Servers run inside the sandboxes; nothing leaves loopback.
 */

let e: EngineHandle;
const created: string[] = [];

async function sandbox(body: Record<string, unknown>): Promise<string> {
  const id = await createSandbox(e, body);
  created.push(id);
  return id;
}

const host = (id: string, port = 8000) => previewHostOf(e, id, port);
const get = (id: string, path = "/", opts: Parameters<typeof hostRequest>[3] = {}, port = 8000) =>
  hostRequest(e, host(id, port), path, opts);

/** socat relays of one sandbox (their socket lives in its directory). */
function relaysOf(id: string): number[] {
  const out: number[] = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      // A relay runs in the directory of its socket (named relative to it: no id in its command line).
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      if (cmd.startsWith("socat ") && fs.readlinkSync(`/proc/${pid}/cwd`).endsWith(`/sbx/${id}/pv`))
        out.push(Number(pid));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

/** Every socat relay whose socket lives under a data dir (it runs there). */
function relaysUnder(dataDir: string): string[] {
  const out: string[] = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
      if (cmd.startsWith("socat ") && cwd.includes(dataDir) && !stat.includes(") Z ")) out.push(`${pid} ${cmd}`);
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

beforeAll(async () => {
  e = await startEngine();
}, 60_000);

afterAll(async () => {
  if (e?.proc?.exitCode === null) {
    for (const id of created) await e.api("DELETE", `/sandboxes/${id}`).catch(() => undefined);
    await e.stop();
  }
  if (e?.dataDir) fs.rmSync(e.dataDir, { recursive: true, force: true });
}, 60_000);

describe("preview URLs", () => {
  let a: string;
  let b: string;
  beforeAll(async () => {
    a = await sandbox({ network: "restricted" });
    b = await sandbox({ network: "open" });
    // Both on port 8000, bound to their own loopback only.
    await serveInSandbox(e, a, 8000, "A");
    await serveInSandbox(e, b, 8000, "B");
  }, 60_000);

  it("publishes preview_host_base and describes a port (GET /v1/sandboxes/:id/previews/:port)", async () => {
    const base = `${a.toLowerCase()}.sbx.localhost:${enginePort(e)}`;
    expect((await e.api("GET", `/sandboxes/${a}`)).body.preview_host_base).toBe(base);
    const r = await e.api("GET", `/sandboxes/${a}/previews/8000`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      port: 8000,
      host: `8000-${base}`,
      url: `http://8000-${base}`,
      auth_required: false,
      listening: true,
    });
    expect((await e.api("GET", `/sandboxes/${a}/previews/8001`)).body.listening).toBe(false);
    for (const bad of ["0", "65536", "abc"]) {
      const v = await e.api("GET", `/sandboxes/${a}/previews/${bad}`);
      expect(v.status, bad).toBe(422);
      expect(v.body.code).toBe("validation_error");
    }
    expect((await e.api("GET", "/sandboxes/sbx_01AAAAAAAAAAAAAAAAAAAAAAAA/previews/8000")).body.code).toBe(
      "sandbox_not_found",
    );
  });

  it("serves two sandboxes on the same port at once, each its own server on 127.0.0.1", async () => {
    const results = await Promise.all([get(a), get(b), get(a), get(b)]);
    expect(results.map((r) => [r.status, r.body])).toEqual([
      [200, "hello from A\n"],
      [200, "hello from B\n"],
      [200, "hello from A\n"],
      [200, "hello from B\n"],
    ]);
  });

  it("matches the host case-insensitively, with or without the sbx_ prefix", async () => {
    const port = enginePort(e);
    const suffix = a.slice("sbx_".length);
    for (const h of [
      `8000-${a.toUpperCase()}.SBX.LOCALHOST:${port}`,
      `8000-${a}.sbx.localhost:${port}`,
      `8000-${a.toLowerCase()}.Sbx.Localhost`,
      `8000-${suffix.toLowerCase()}.sbx.localhost:${port}`,
    ]) {
      const r = await hostRequest(e, h);
      expect([r.status, r.body], h).toEqual([200, "hello from A\n"]);
    }
  });

  it("passes method, target, body, status and headers through and adds X-Forwarded-*", async () => {
    const r = await get(a, "/echo/p%2Fq?x=1&y=%20", {
      method: "POST",
      headers: {
        "content-type": "text/plain",
        "x-custom": "kept",
        "x-orkestr-preview-token": "not-for-the-sandbox",
        connection: "keep-alive, x-hop",
        "x-hop": "dropped",
      },
      body: "payload",
    });
    expect(r.status).toBe(201);
    expect(r.headers["x-served-by"]).toBe("A");
    expect(r.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    const seen = JSON.parse(r.body);
    expect(seen).toMatchObject({ method: "POST", url: "/echo/p%2Fq?x=1&y=%20", body: "payload" });
    expect(seen.headers).toMatchObject({
      host: host(a),
      "x-custom": "kept",
      "x-forwarded-for": "127.0.0.1",
      "x-forwarded-host": host(a),
      "x-forwarded-proto": "http",
      "x-forwarded-port": String(enginePort(e)),
    });
    expect(seen.headers["x-orkestr-preview-token"]).toBeUndefined();
    expect(seen.headers["x-hop"]).toBeUndefined();
  });

  it("streams a response as it is produced (no buffering)", async () => {
    const t0 = Date.now();
    const { firstAt, body } = await new Promise<{ firstAt: number; body: string }>((resolve, reject) => {
      let firstAt = 0;
      let body = "";
      const req = http.request(
        { host: "127.0.0.1", port: enginePort(e), path: "/stream", headers: { host: host(a) }, agent: false },
        (res) => {
          res.setEncoding("utf8");
          res.on("data", (d: string) => {
            if (!firstAt) firstAt = Date.now() - t0;
            body += d;
          });
          res.on("end", () => resolve({ firstAt, body }));
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(body).toBe("first\nsecond\n");
    expect(firstAt).toBeLessThan(1000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
  });

  it("streams a request body as it is sent (the sandbox answers the first chunk before the rest exists)", async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const req = http.request(
        {
          host: "127.0.0.1",
          port: enginePort(e),
          method: "POST",
          path: "/firstchunk",
          headers: { host: host(a), "transfer-encoding": "chunked" },
          agent: false,
        },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => {
            body += d;
            // Only once the sandbox has seen the first chunk does the rest get sent.
            if (body === "got 5\n") req.end("world!");
          });
          res.on("end", () => resolve(body));
        },
      );
      req.on("error", reject);
      req.write("hello");
      setTimeout(() => reject(new Error("the first chunk never reached the sandbox on its own")), 10_000).unref();
    });
    expect(text).toBe("got 5\nthen 6\n");
  });

  it("carries WebSockets (dev-server HMR) to the right sandbox", async () => {
    const wa = await openPreviewSocket(e, host(a));
    const wb = await openPreviewSocket(e, host(b));
    try {
      expect(await roundTrip(wa, "ping")).toBe("A:ping");
      expect(await roundTrip(wb, "ping")).toBe("B:ping");
      const big = "x".repeat(5000);
      expect(await roundTrip(wa, big)).toBe(`A:${big}`);
      expect(await roundTrip(wa, "again")).toBe("A:again");
    } finally {
      wa.close();
      wb.close();
    }
  });

  it("answers 502 port_not_listening with a plain page (JSON when asked for)", async () => {
    const r = await get(a, "/", {}, 8001);
    expect(r.status).toBe(502);
    expect(r.headers["content-type"]).toMatch(/^text\/plain/);
    expect(r.headers["x-orkestr-error-code"]).toBe("port_not_listening");
    expect(r.body).toContain("port_not_listening");
    expect(r.body).toContain("8001");
    const j = await get(a, "/", { headers: { accept: "application/json" } }, 8001);
    expect(j.status).toBe(502);
    expect(JSON.parse(j.body).code).toBe("port_not_listening");
    await expect(openPreviewSocket(e, host(a, 8001))).rejects.toMatchObject({ status: 502 });
  });

  it("answers 404 for unknown sandboxes and malformed preview hosts, never the API", async () => {
    const port = enginePort(e);
    for (const h of [
      `8000-sbx_01AAAAAAAAAAAAAAAAAAAAAAAA.sbx.localhost:${port}`,
      `nothing.sbx.localhost:${port}`,
      `0-${a}.sbx.localhost:${port}`,
      `x.8000-${a}.sbx.localhost`,
    ]) {
      const r = await hostRequest(e, h, "/v1/sandboxes", { headers: { authorization: `Bearer ${e.token}` } });
      expect(r.status, h).toBe(404);
      expect(r.headers["content-type"], h).toMatch(/^text\/plain/);
      expect(r.body, h).toContain("sandbox_not_found");
    }
  });

  it("sends /v1 and /_admin paths on a preview host to the sandbox, not the API", async () => {
    const list = await get(a, "/v1/sandboxes", { headers: { authorization: `Bearer ${e.token}` } });
    expect([list.status, list.body]).toEqual([200, "hello from A\n"]);
    const admin = await get(a, "/_admin/tokens", {
      method: "POST",
      headers: { "x-baton-bootstrap": e.bootstrap!, "content-type": "application/json" },
      body: "{}",
    });
    expect([admin.status, admin.body]).toEqual([200, "hello from A\n"]);
    // The API itself still wants its bearer token.
    expect((await e.api("GET", "/sandboxes", undefined, { token: null })).status).toBe(401);
  });

  it("runs each relay as the sandbox's uid inside its cgroups, and removes it on terminate", async () => {
    const c = await sandbox({ network: "restricted" });
    await serveInSandbox(e, c, 8000, "C");
    expect((await get(c)).body).toBe("hello from C\n");
    const pids = relaysOf(c);
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) {
      const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
      const uids = status
        .match(/Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/)!
        .slice(1)
        .map(Number);
      expect(uids.every((u) => u === uids[0] && u >= 1000)).toBe(true);
      expect(status).toMatch(/CapEff:\s+0+\n/);
      const pidsCg =
        fs
          .readFileSync(`/proc/${pid}/cgroup`, "utf8")
          .split("\n")
          .find((l) => /:pids:/.test(l)) ?? "";
      expect(pidsCg).toMatch(new RegExp(`/${cgroupNameOf(e, c)}$`));
      // In the sandbox's network namespace, not the engine's.
      expect(fs.readlinkSync(`/proc/${pid}/ns/net`)).not.toBe(fs.readlinkSync(`/proc/${e.enginePid}/ns/net`));
    }
    const sockDir = enginePath(e, `${e.dataDir}/engine/sbx/${c}/pv`);
    expect(fs.readdirSync(sockDir)).toEqual([expect.stringMatching(/^8000-4-[0-9a-f]{8}\.sock$/)]);
    expect((await e.api("DELETE", `/sandboxes/${c}`)).status).toBe(204);
    await until("the sandbox's preview relays to stop", () => relaysOf(c).length === 0, { timeout: 3000 });
    expect(fs.existsSync(sockDir)).toBe(false);
    const gone = await get(c);
    expect(gone.status).toBe(410);
    expect(gone.body).toContain("sandbox_terminated");
  });

  it("follows a server that stops (502 port_not_listening) and comes back on another address", async () => {
    const f = await sandbox({ network: "restricted" });
    await serveInSandbox(e, f, 8000, "F1");
    expect((await get(f)).body).toBe("hello from F1\n");
    const ws = await openPreviewSocket(e, host(f));
    await exec(e, f, "kill $(cat /tmp/srv-8000.pid); while [ -e /proc/$(cat /tmp/srv-8000.pid) ]; do sleep 0.05; done");
    const down = await get(f);
    expect(down.status).toBe(502);
    expect(down.headers["x-orkestr-error-code"]).toBe("port_not_listening");
    await expect(openPreviewSocket(e, host(f))).rejects.toMatchObject({ status: 502 });
    ws.terminate();
    // Back, but on ::1 now (as a dev server might after `localhost` resolved differently).
    await serveInSandbox(e, f, 8000, "F2", "::1");
    const first = await get(f);
    expect([200, 502]).toContain(first.status);
    expect((await get(f)).body).toBe("hello from F2\n");
  });

  it("keeps at most 16 relays per sandbox, starting an evicted one again on demand", async () => {
    const g = await sandbox({ network: "restricted" });
    const many =
      'const http = require("http"); for (let p = 9000; p <= 9016; p++) http.createServer((q, r) => r.end("port " + p)).listen(p, "127.0.0.1");';
    await exec(e, g, `(nohup node -e "$SRV" >/dev/null 2>&1 &)`, { env: { SRV: many } });
    const ports = Array.from({ length: 17 }, (_, i) => 9000 + i);
    for (let i = 0; i < 100 && (await get(g, "/", {}, 9016)).status !== 200; i++)
      await new Promise((r) => setTimeout(r, 50));
    const listeners = () =>
      relaysOf(g).filter(
        (pid) => Number(fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]) === e.enginePid,
      );
    const alive = () => listeners().filter((pid) => !fs.readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z "));
    for (const p of ports) expect((await get(g, "/", {}, p)).body).toBe(`port ${p}`);
    await until("16 live relays, the 17th evicted", () => alive().length === 16, { timeout: 3000 });
    // The least recently used (9000, then 9001) made room; asking again brings it back.
    for (const p of [9000, 9001, 9016]) expect((await get(g, "/", {}, p)).body).toBe(`port ${p}`);
    await until("16 live relays, the 17th evicted", () => alive().length === 16, { timeout: 3000 });
  });

  it("reaches servers bound to 0.0.0.0, ::1 and :: as well", async () => {
    const d = await sandbox({ network: "restricted" });
    await serveInSandbox(e, d, 3000, "any4", "0.0.0.0");
    await serveInSandbox(e, d, 3001, "lo6", "::1");
    await serveInSandbox(e, d, 3002, "any6", "::");
    expect((await get(d, "/", {}, 3000)).body).toBe("hello from any4\n");
    expect((await get(d, "/", {}, 3001)).body).toBe("hello from lo6\n");
    expect((await get(d, "/", {}, 3002)).body).toBe("hello from any6\n");
  });
});

describe("preview_auth", () => {
  let id: string;
  let token: string;
  beforeAll(async () => {
    const r = await e.api("POST", "/sandboxes", { template: "python-3.12", network: "restricted", preview_auth: true });
    expect(r.status).toBe(201);
    id = r.body.id;
    token = r.body.preview_auth_token;
    created.push(id);
    await serveInSandbox(e, id, 8000, "P");
  }, 60_000);

  it("returns the token once, at create", async () => {
    expect(token).toMatch(/^pvt_[A-Za-z0-9_-]{20,}$/);
    const v = (await e.api("GET", `/sandboxes/${id}`)).body;
    expect(v.preview_auth).toBe(true);
    expect(v.preview_auth_token).toBeUndefined();
    expect((await e.api("GET", `/sandboxes/${id}/previews/8000`)).body.auth_required).toBe(true);
  });

  it("refuses requests without the token: 401 preview_auth_required", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { "x-orkestr-preview-token": "pvt_wrong" },
      { cookie: "orkestr_preview=forged" },
      { cookie: "orkestr_preview_lax=forged" },
    ];
    for (const headers of attempts) {
      const r = await get(id, "/", { headers });
      expect(r.status).toBe(401);
      expect(r.headers["x-orkestr-error-code"]).toBe("preview_auth_required");
      expect(r.body).not.toContain("hello");
    }
    expect((await get(id, `/?orkestr_token=pvt_wrong`)).status).toBe(401);
    await expect(openPreviewSocket(e, host(id))).rejects.toMatchObject({ status: 401 });
  });

  it("admits the X-Orkestr-Preview-Token header and strips it before the sandbox", async () => {
    const r = await get(id, "/echo", { headers: { "x-orkestr-preview-token": token } });
    expect(r.status).toBe(201);
    expect(JSON.parse(r.body).headers["x-orkestr-preview-token"]).toBeUndefined();
    const ws = await openPreviewSocket(e, host(id), "/hmr", { "x-orkestr-preview-token": token });
    expect(await roundTrip(ws, "hi")).toBe("P:hi");
    ws.close();
  });

  it("turns ?orkestr_token= into an HttpOnly cookie and a redirect without it", async () => {
    const first = await get(id, `/echo?a=1&orkestr_token=${encodeURIComponent(token)}&b=2`);
    expect(first.status).toBe(302);
    expect(first.headers.location).toBe("/echo?a=1&b=2");
    const [setCookie, setLaxCookie] = first.headers["set-cookie"]! as string[];
    // SameSite=None; Secure; Partitioned: sent inside a console's cross-site iframe (a Lax cookie is not).
    expect(setCookie).toMatch(
      /^orkestr_preview=[A-Za-z0-9_-]+; Path=\/; HttpOnly; Secure; SameSite=None; Partitioned$/,
    );
    // The Lax twin serves top-level visits in browsers that refuse Secure cookies over http.
    expect(setLaxCookie).toMatch(/^orkestr_preview_lax=[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(setCookie).not.toContain(token);
    const cookie = setCookie!.split(";")[0]!;
    const laxCookie = setLaxCookie!.split(";")[0]!;
    expect(laxCookie.split("=")[1]).toBe(cookie.split("=")[1]);
    // Never a redirect off this host, whatever the path looks like.
    const odd = await get(id, `//elsewhere.test/x?orkestr_token=${encodeURIComponent(token)}`);
    expect([odd.status, odd.headers.location]).toEqual([302, "/.//elsewhere.test/x"]);
    const next = await get(id, "/echo?a=1&b=2", { headers: { cookie: `theirs=1; ${cookie}; other=2` } });
    expect(next.status).toBe(201);
    // The sandbox sees its own cookies only.
    expect(JSON.parse(next.body).headers.cookie).toBe("theirs=1; other=2");
    const viaLax = await get(id, "/echo", { headers: { cookie: `theirs=1; ${laxCookie}` } });
    expect(viaLax.status).toBe(201);
    expect(JSON.parse(viaLax.body).headers.cookie).toBe("theirs=1");
    expect((await get(id, "/echo", { headers: { cookie: `${cookie}; ${laxCookie}` } })).status).toBe(201);
    expect(
      JSON.parse((await get(id, "/echo", { headers: { cookie: `${cookie}; ${laxCookie}` } })).body).headers.cookie,
    ).toBeUndefined();
    // The cookie is bound to this host (port): it does not open another port of the same sandbox.
    await serveInSandbox(e, id, 8002, "P2");
    expect((await get(id, "/", { headers: { cookie } }, 8002)).status).toBe(401);
    // A WebSocket carries the cookie like a browser does.
    const ws = await openPreviewSocket(e, host(id), "/hmr", { cookie });
    expect(await roundTrip(ws, "c")).toBe("P:c");
    ws.close();
  });

  it("rotates the token: the old token and its cookies stop working", async () => {
    const first = await get(id, `/?orkestr_token=${token}`);
    const oldCookie = first.headers["set-cookie"]![0]!.split(";")[0]!;
    expect((await get(id, "/", { headers: { cookie: oldCookie } })).status).toBe(200);
    const r = await e.api("POST", `/sandboxes/${id}/preview-token`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["preview_auth_token"]);
    const fresh = r.body.preview_auth_token as string;
    expect(fresh).toMatch(/^pvt_/);
    expect(fresh).not.toBe(token);
    expect((await get(id, "/", { headers: { "x-orkestr-preview-token": token } })).status).toBe(401);
    expect((await get(id, "/", { headers: { cookie: oldCookie } })).status).toBe(401);
    expect((await get(id, "/", { headers: { "x-orkestr-preview-token": fresh } })).status).toBe(200);
    token = fresh;
    const events = (await e.api("GET", `/sandboxes/${id}/events`)).body.map((x: { type: string }) => x.type);
    expect(events).toContain("preview.token_rotated");
  });

  it("refuses to rotate a token a sandbox does not have (409 preview_auth_disabled)", async () => {
    const open = await sandbox({ network: "restricted" });
    const r = await e.api("POST", `/sandboxes/${open}/preview-token`);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("preview_auth_disabled");
  });
});

describe("paused sandboxes", () => {
  it("answer 409 sandbox_paused without auto_resume, and serve again after resume", async () => {
    const id = await sandbox({ network: "restricted" });
    await serveInSandbox(e, id, 8000, "Z");
    expect((await get(id)).status).toBe(200);
    expect((await e.api("POST", `/sandboxes/${id}/pause`)).status).toBe(200);
    const r = await get(id);
    expect(r.status).toBe(409);
    expect(r.headers["content-type"]).toMatch(/^text\/plain/);
    expect(r.body).toContain("sandbox_paused");
    expect((await e.api("GET", `/sandboxes/${id}`)).body.status).toBe("paused");
    await expect(openPreviewSocket(e, host(id))).rejects.toMatchObject({ status: 409 });
    expect((await e.api("POST", `/sandboxes/${id}/resume`)).status).toBe(200);
    expect((await get(id)).body).toBe("hello from Z\n");
  });

  it("wake on a request with auto_resume (one resume for a burst of requests)", async () => {
    const id = await sandbox({ network: "restricted", auto_resume: true });
    await serveInSandbox(e, id, 8000, "W");
    expect((await get(id)).status).toBe(200);
    expect((await e.api("POST", `/sandboxes/${id}/pause`)).status).toBe(200);
    const burst = await Promise.all(Array.from({ length: 6 }, () => get(id)));
    expect(burst.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(burst[0]!.body).toBe("hello from W\n");
    expect((await e.api("GET", `/sandboxes/${id}`)).body.status).toBe("running");
    const events = (await e.api("GET", `/sandboxes/${id}/events`)).body.map((x: { type: string }) => x.type);
    expect(events.filter((t: string) => t === "sandbox.resumed")).toHaveLength(1);
  });

  it("keep an open WebSocket across pause and resume (it stalls, then carries on)", async () => {
    const id = await sandbox({ network: "restricted" });
    await serveInSandbox(e, id, 8000, "H");
    const ws = await openPreviewSocket(e, host(id));
    try {
      expect(await roundTrip(ws, "before")).toBe("H:before");
      expect((await e.api("POST", `/sandboxes/${id}/pause`)).status).toBe(200);
      const during = roundTrip(ws, "during", 15_000);
      await new Promise((r) => setTimeout(r, 300));
      expect((await e.api("POST", `/sandboxes/${id}/resume`)).status).toBe(200);
      expect(await during).toBe("H:during");
    } finally {
      ws.close();
    }
  });
});

describe("sandboxes without previews", () => {
  it("network off: no preview_host_base, 409 network_off from the API and the proxy", async () => {
    const id = await sandbox({ network: "off" });
    expect((await e.api("GET", `/sandboxes/${id}`)).body.preview_host_base).toBeNull();
    const r = await e.api("GET", `/sandboxes/${id}/previews/8000`);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("network_off");
    const p = await get(id);
    expect(p.status).toBe(409);
    expect(p.body).toContain("network_off");
    // Something listening inside changes nothing: an off sandbox has no port to expose.
    await exec(e, id, "(nohup python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 &)");
    expect((await get(id)).status).toBe(409);
  });
});

describe("the free plan", () => {
  let free: EngineHandle;
  beforeAll(async () => {
    free = await startEngine({ env: { ORKESTR_ENGINE_PLAN: "free" } });
  }, 60_000);
  afterAll(async () => {
    await free?.stop();
    if (free?.dataDir) fs.rmSync(free.dataDir, { recursive: true, force: true });
  });

  it("has no previews: 403 plan_limit from the API and the proxy", async () => {
    const id = await createSandbox(free, { network: "restricted", preview_auth: true });
    expect((await free.api("GET", `/sandboxes/${id}`)).body.preview_host_base).toBeNull();
    const r = await free.api("GET", `/sandboxes/${id}/previews/8000`);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("plan_limit");
    expect((await free.api("POST", `/sandboxes/${id}/preview-token`)).body.code).toBe("plan_limit");
    const p = await hostRequest(free, previewHostOf(free, id, 8000));
    expect(p.status).toBe(403);
    expect(p.body).toContain("plan_limit");
    await free.api("DELETE", `/sandboxes/${id}`);
  });
});

describe("engine shutdown", () => {
  it("leaves no relay or socket behind", async () => {
    const id = await sandbox({ network: "restricted" });
    await serveInSandbox(e, id, 8000, "S");
    const ws = await openPreviewSocket(e, host(id));
    expect(await roundTrip(ws, "x")).toBe("S:x");
    const closed = new Promise<void>((r) => ws.once("close", () => r()));
    expect(relaysUnder(e.dataDir!).length).toBeGreaterThan(0);
    expect(await e.stop("SIGTERM")).toBe(0);
    await closed;
    await until("no preview relay left under the data dir", () => relaysUnder(e.dataDir!).length === 0, {
      timeout: 5000,
    });
    expect(fs.readdirSync(`${e.dataDir}/engine/sbx`)).toEqual([]);
  });
});
