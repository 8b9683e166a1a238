import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { freePort } from "../../engine/test/helpers/free-port";

// The real console server (scripts/console-server.mjs: front door, terminal relay, listen) over real
// sockets, with a stand-in for Next (tests/helpers/next-stub/) whose handler answers with the URL
// and headers that reached it: what this tests is what happens before Next sees a request, without
// the minutes a `next build` takes. e2e/auth.spec.ts repeats the Host check against the real build.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SERVER = path.join(ROOT, "scripts", "console-server.mjs");
const STUB = path.join(ROOT, "tests", "helpers", "next-stub", "register.mjs");

interface Running {
  port: number;
  log(): string;
  stop(): Promise<void>;
}

/** Starts the console server with `env`; resolves once it is listening, or with its output if it exited. */
async function startServer(
  env: Record<string, string>,
  args: string[] = [],
): Promise<Running | { exited: number | null; log: string }> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-console-server-"));
  const childEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: "production",
    BATON_DATA_DIR: dataDir,
    BATON_SECRET: "d".repeat(48),
    DATABASE_URL: `sqlite:${path.join(dataDir, "baton.sqlite")}`,
    ...env,
  };
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", STUB, SERVER, "-p", String(port), "-H", "127.0.0.1", ...args],
    { cwd: ROOT, env: childEnv, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const cleanup = () => fs.rmSync(dataDir, { recursive: true, force: true });
  const result = await new Promise<"ready" | number | null>((resolve) => {
    child.on("exit", (code) => resolve(code));
    const check = setInterval(() => {
      if (/Ready in/.test(out)) {
        clearInterval(check);
        resolve("ready");
      }
    }, 25);
    child.on("exit", () => clearInterval(check));
  });
  if (result !== "ready") {
    cleanup();
    return { exited: result, log: out };
  }
  return {
    port,
    log: () => out,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      cleanup();
    },
  };
}

interface Answer {
  status: number;
  type: string | undefined;
  stub: boolean;
  body: string;
  json<T = Record<string, unknown>>(): T;
}

/** One HTTP request with exactly these headers (Host included: fetch would not let us set it). */
function send(
  port: number,
  opts: { method?: string; path: string; headers: Record<string, string>; body?: string; rawTarget?: string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method: opts.method ?? "GET",
        path: opts.rawTarget ?? opts.path,
        headers: opts.headers,
        setHost: false,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            type: res.headers["content-type"],
            stub: res.headers["x-stub"] === "next",
            body,
            json: () => JSON.parse(body),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

/** A WebSocket upgrade: the HTTP status it was refused with (and the body), or "open". */
function upgrade(
  port: number,
  headers: Record<string, string>,
  path = "/api/v1/sandboxes/sbx_1/pty/pty_1/ws",
): Promise<{ status: number; body: string } | "open"> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers });
    ws.on("open", () => {
      ws.close();
      resolve("open");
    });
    ws.on("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on("error", reject);
  });
}

describe("the console server with its defaults (loopback names, no trusted proxy)", () => {
  let server: Running;
  beforeAll(async () => {
    const started = await startServer({});
    if ("exited" in started) throw new Error(`the console server exited (${started.exited}):\n${started.log}`);
    server = started;
  }, 60_000);
  afterAll(async () => server?.stop());

  it("prints the first-run setup code before it listens, and keeps it in the data dir", () => {
    expect(server.log()).toMatch(
      /First run: the setup code is [2-9A-Z]{4}-[2-9A-Z]{4}-[2-9A-Z]{4} \(also in .*setup-code\)[^\n]*\n(.|\n)*Ready in/,
    );
  });

  it("answers a foreign Host (DNS rebinding) with 421 before Next sees it: JSON for the API, a plain page otherwise", async () => {
    const host = `evil.example:${server.port}`;
    const setup = await send(server.port, {
      method: "POST",
      path: "/api/setup",
      headers: { host, origin: `http://${host}`, "sec-fetch-site": "same-origin", "content-type": "application/json" },
      body: JSON.stringify({
        name: "Eve",
        email: "eve@example.com",
        password: "a long enough password",
        team_name: "Evil",
      }),
    });
    expect(setup.status).toBe(421);
    expect(setup.stub).toBe(false);
    expect(setup.type).toBe("application/json");
    expect(setup.json()).toEqual({ detail: expect.stringContaining("host name"), code: "host_not_allowed" });

    const page = await send(server.port, { path: "/setup", headers: { host } });
    expect(page.status).toBe(421);
    expect(page.stub).toBe(false);
    expect(page.type).toMatch(/^text\/plain/);
    expect(page.body).toMatch(/^421 Misdirected Request/);

    for (const other of ["localhost", `localhost:${server.port + 1}`, `127.0.0.1.evil.example:${server.port}`]) {
      expect((await send(server.port, { path: "/login", headers: { host: other } })).status, other).toBe(421);
    }
    // HTTP/1.1 without Host: node:http answers 400 itself; either way Next never sees it.
    const hostless = await send(server.port, { path: "/login", headers: {} });
    expect([400, 421]).toContain(hostless.status);
    expect(hostless.stub).toBe(false);

    // The console's own names on its port reach Next.
    for (const own of [`localhost:${server.port}`, `127.0.0.1:${server.port}`]) {
      const ok = await send(server.port, { path: "/login", headers: { host: own } });
      expect(ok.stub, own).toBe(true);
      expect(ok.status).toBe(200);
    }
  });

  it("refuses the WebSocket upgrade of a foreign Host with 421, and hands its own to the relay", async () => {
    const host = `evil.example:${server.port}`;
    const refused = await upgrade(server.port, { host, origin: `http://${host}` });
    expect(refused).toMatchObject({ status: 421 });
    expect(JSON.parse((refused as { body: string }).body)).toMatchObject({ code: "host_not_allowed" });
    // Its own name: the relay answers (no session: 401).
    const own = `127.0.0.1:${server.port}`;
    expect(await upgrade(server.port, { host: own, origin: `http://${own}` })).toMatchObject({ status: 401 });
    // Anything else: 404; Next has no upgrades of its own in production.
    for (const other of ["/_next/hmr", "/elsewhere"]) {
      expect(await upgrade(server.port, { host: own }, other), other).toMatchObject({ status: 404 });
    }
  });

  it("writes the socket's address as the client's, over whatever the client claimed", async () => {
    const res = await send(server.port, {
      path: "/api/me",
      headers: {
        host: `127.0.0.1:${server.port}`,
        "x-baton-client-ip": "203.0.113.9",
        "x-forwarded-for": "203.0.113.7, 203.0.113.8",
        "x-real-ip": "203.0.113.6",
        "x-forwarded-host": "evil.example",
        "x-forwarded-proto": "https",
        forwarded: "for=203.0.113.5",
      },
    });
    expect(res.stub).toBe(true);
    const { headers } = res.json<{ headers: Record<string, string> }>();
    expect(headers["x-baton-client-ip"]).toBe("127.0.0.1");
    expect(headers["x-forwarded-for"]).toBe("127.0.0.1");
    for (const gone of ["x-real-ip", "x-forwarded-host", "x-forwarded-proto", "forwarded"])
      expect(headers[gone], gone).toBeUndefined();
  });

  it("refuses absolute-form request targets, whose URL could name another host than Host", async () => {
    const res = await send(server.port, {
      path: "/",
      rawTarget: "http://evil.example/api/setup",
      headers: { host: `127.0.0.1:${server.port}` },
    });
    expect(res.status).toBe(400);
    expect(res.stub).toBe(false);
  });
});

describe("the console server behind one trusted reverse proxy, at BATON_URL", () => {
  let server: Running;
  beforeAll(async () => {
    const started = await startServer({ BATON_URL: "https://baton.example.com", BATON_TRUSTED_PROXIES: "1" });
    if ("exited" in started) throw new Error(`the console server exited (${started.exited}):\n${started.log}`);
    server = started;
  }, 60_000);
  afterAll(async () => server?.stop());

  it("takes the client from the hop the proxy appended (rightmost), not from what the client wrote", async () => {
    const res = await send(server.port, {
      path: "/api/me",
      // The client sent "X-Forwarded-For: 198.51.100.1"; the proxy appended the address it saw.
      headers: {
        host: "baton.example.com",
        "x-forwarded-for": "198.51.100.1, 203.0.113.5",
        "x-forwarded-proto": "https",
        "x-baton-client-ip": "198.51.100.2",
      },
    });
    expect(res.stub).toBe(true);
    const { headers } = res.json<{ headers: Record<string, string> }>();
    expect(headers["x-baton-client-ip"]).toBe("203.0.113.5");
    expect(headers["x-forwarded-proto"]).toBe("https"); // the proxy's word is kept
  });

  it("serves only BATON_URL's name (the loopback defaults are gone), in Host and X-Forwarded-Host", async () => {
    expect((await send(server.port, { path: "/login", headers: { host: `127.0.0.1:${server.port}` } })).status).toBe(
      421,
    );
    expect(
      (
        await send(server.port, {
          path: "/login",
          headers: { host: "baton.example.com", "x-forwarded-host": "evil.example" },
        })
      ).status,
    ).toBe(421);
    expect((await send(server.port, { path: "/login", headers: { host: "baton.example.com" } })).stub).toBe(true);
  });
});

describe("the console server's configuration", () => {
  it("refuses to start with an unusable BATON_URL, BATON_ALLOWED_HOSTS or BATON_TRUSTED_PROXIES", async () => {
    const started = await startServer({
      BATON_URL: "baton.example.com",
      BATON_ALLOWED_HOSTS: "ok.example, not a host",
      BATON_TRUSTED_PROXIES: "many",
    });
    if ("stop" in started) await started.stop(); // it should not have started; never leave it running
    expect(started).toMatchObject({ exited: 1 });
    const { log } = started as { log: string };
    expect(log).toContain("BATON_URL must be an absolute http(s) URL");
    expect(log).toContain('BATON_ALLOWED_HOSTS: "not a host"');
    expect(log).toContain("BATON_TRUSTED_PROXIES must be a number of proxy hops");
  }, 60_000);
});

describe("the console server in dev mode (npm run dev)", () => {
  let server: Running;
  beforeAll(async () => {
    const started = await startServer({}, ["--dev"]);
    if ("exited" in started) throw new Error(`the console server exited (${started.exited}):\n${started.log}`);
    server = started;
  }, 60_000);
  afterAll(async () => server?.stop());

  it("serves the terminal relay as in production, and hands Next its own upgrades (HMR) after the front door", async () => {
    const own = `127.0.0.1:${server.port}`;
    expect(await upgrade(server.port, { host: own, origin: `http://${own}` })).toMatchObject({ status: 401 });
    expect(await upgrade(server.port, { host: own }, "/_next/hmr")).toMatchObject({ status: 418 });
    const foreign = `evil.example:${server.port}`;
    expect(await upgrade(server.port, { host: foreign }, "/_next/hmr")).toMatchObject({ status: 421 });
    expect(await upgrade(server.port, { host: own }, "/elsewhere")).toMatchObject({ status: 404 });
  });
});
