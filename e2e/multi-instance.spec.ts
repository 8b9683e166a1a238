import { test as base, expect, type APIResponse, type Page } from "@playwright/test";
import pg from "pg";
import { startEngine, type EngineHandle } from "../engine/test/helpers/engine";
import { startTopology, statusOf, type ConsoleInstance, type Topology } from "../scripts/multi-instance/topology";
import { consoleDatabase, type ConsoleDatabaseKind } from "./database";
import { ensureBuild, OWNER } from "./fixtures";
import { watchForErrors } from "./helpers";

// @db: several Baton instances on one PostgreSQL behind nginx (scripts/multi-instance/), with one
// engine, all real processes on loopback: what is kept in the database (sessions, sign-in limits,
// stored tokens, the setup code, the housekeeping lease) is shared by every instance, and the
// terminal relay and the Host and Origin checks work through the balancer.
//
// nginx connects to the instances from 127.0.0.2 (proxy_bind) while the browser comes from
// 127.0.0.1: so the address Baton records shows whether it took the client's from the trusted hop
// of X-Forwarded-For, and not the proxy's or a forged one.

interface Multi {
  topology: Topology;
  engine: EngineHandle;
  databaseUrl: string;
}

const test = base.extend<object, { database: ConsoleDatabaseKind; multi: Multi }>({
  database: ["sqlite", { scope: "worker", option: true }],
  multi: [
    async ({ database }, use) => {
      // Several instances need one database they all reach: PostgreSQL (the postgres project).
      if (database !== "postgres") {
        await use(null as never);
        return;
      }
      await ensureBuild();
      const engine = await startEngine();
      const db = await consoleDatabase("postgres");
      try {
        const topology = await startTopology({
          databaseUrl: db.env.DATABASE_URL!,
          engineUrl: engine.origin,
          instances: 2,
          proxyBind: "127.0.0.2",
        });
        try {
          await use({ topology, engine, databaseUrl: db.env.DATABASE_URL! });
        } finally {
          await topology.stop();
        }
      } finally {
        await engine.stop();
        await db.drop();
      }
    },
    { scope: "worker", timeout: 15 * 60_000 },
  ],
});

test.skip(({ database }) => database !== "postgres", "several instances share one PostgreSQL: the postgres project");

/** The instance nginx says answered. */
function servedBy(topology: Topology, res: APIResponse): ConsoleInstance {
  const upstream = res.headers()["x-baton-upstream"] ?? null;
  const instance = topology.instanceFor(upstream);
  if (!instance) throw new Error(`no instance answered ${res.url()} (X-Baton-Upstream: ${upstream})`);
  return instance;
}

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

test.describe.serial("two Baton instances behind nginx", () => {
  test("first-run setup and sign-in through the balancer; the session is valid on both instances @db", async ({
    page,
    multi,
  }) => {
    const { topology } = multi;
    const problems = watchForErrors(page);
    // The setup code: printed by one instance, the same on both (it lives in the database).
    const codes = topology.instances.map((i) => /the setup code is ([A-Z0-9-]+)/.exec(i.log())?.[1]);
    expect(codes.filter(Boolean).length).toBeGreaterThan(0);
    expect(new Set(codes.filter(Boolean)).size).toBe(1);

    await page.goto(`${topology.url}/setup`);
    await page.getByLabel("Setup code").fill(topology.setupCode());
    await page.getByLabel("Name", { exact: true }).fill(OWNER.name);
    await page.getByLabel("Email", { exact: true }).fill(OWNER.email);
    await page.getByLabel("Password", { exact: true }).fill(OWNER.password);
    await page.getByLabel("Confirm password").fill(OWNER.password);
    await page.getByLabel("Team name").fill(OWNER.teamName);
    // Every console page opens the received-events stream once it has hydrated (204 here: no
    // receiver). Sign out only after it was answered: a session ended under a page still loading
    // rightly gets that page a 401, which is not what this test is about.
    const feedAnswered = page.waitForResponse((r) => new URL(r.url()).pathname === "/api/hooks/events/live");
    await page.getByRole("button", { name: "Create owner account" }).click();
    await expect(page).not.toHaveURL(/\/setup$/);
    expect((await feedAnswered).status()).toBe(204);

    // Sign out, and in again through the form.
    const out = await page.request.post(`${topology.url}/api/auth/logout`, { headers: { origin: topology.url } });
    expect(out.ok(), await out.text()).toBe(true);
    await page.goto(`${topology.url}/login`);
    await page.getByLabel("Email", { exact: true }).fill(OWNER.email);
    await page.getByLabel("Password", { exact: true }).fill(OWNER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).not.toHaveURL(/\/login(\?|$)/);

    // The browser's session cookie, on request after request: nginx takes turns, and each instance
    // knows the session (a row in the shared database, the cookie under the shared key).
    const hits = new Map<string, number>();
    for (let i = 0; i < 6; i++) {
      const me = await page.request.get(`${topology.url}/api/me`);
      expect(me.status(), await me.text()).toBe(200);
      expect(await me.json()).toMatchObject({ user: { email: OWNER.email } });
      const name = servedBy(topology, me).name;
      hits.set(name, (hits.get(name) ?? 0) + 1);
    }
    expect([...hits.keys()].sort()).toEqual(["baton-a", "baton-b"]);
    // And pages, rendered by either instance.
    for (let i = 0; i < 2; i++) {
      const response = await page.goto(`${topology.url}/settings/connections`);
      expect(response?.status()).toBe(200);
      await expect(page).toHaveURL(/\/settings\/connections(?:[?&]team=[a-z0-9-]+)?$/);
    }
    expect(problems).toEqual([]);

    // The session's address is the browser's (127.0.0.1, the hop nginx vouches for), not nginx's (127.0.0.2).
    const ips = await query<{ ip: string | null }>(
      multi.databaseUrl,
      "select ip from sessions where revoked_at is null",
    );
    expect(ips.map((r) => r.ip)).toEqual(["127.0.0.1"]);
  });

  test("the sign-in limit counts attempts on both instances together @db", async ({ playwright, multi }) => {
    const { topology } = multi;
    const api = await playwright.request.newContext();
    // An address without an account is limited like one with (and the owner's stays usable).
    const attempt = () =>
      api.post(`${topology.url}/api/auth/login`, {
        data: { email: "mallory@example.com", password: "not the password at all" },
        // A forged address: the instance believes only the hop nginx appended.
        headers: { origin: topology.url, "x-forwarded-for": "203.0.113.9" },
      });
    const failedOn = new Set<string>();
    for (let i = 0; i < 10; i++) {
      const res = await attempt();
      expect(res.status(), await res.text()).toBe(401);
      failedOn.add(servedBy(topology, res).name);
    }
    expect([...failedOn].sort()).toEqual(["baton-a", "baton-b"]); // about five each: neither alone reached 10
    const limitedOn = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const res = await attempt();
      expect(res.status()).toBe(429);
      expect(await res.json()).toMatchObject({ code: "rate_limited" });
      limitedOn.add(servedBy(topology, res).name);
    }
    expect([...limitedOn].sort()).toEqual(["baton-a", "baton-b"]);
    await api.dispose();

    const keys = await query<{ key: string; count: number }>(
      multi.databaseUrl,
      "select key, count from login_attempts where key like 'signin:ip:%' order by key",
    );
    expect(keys.map((k) => k.key)).toEqual(["signin:ip:127.0.0.1"]);
  });

  test("a sandbox's terminal through the balancer, on the engine token either instance decrypts @db", async ({
    page,
    multi,
  }) => {
    test.setTimeout(120_000);
    const { topology, engine } = multi;
    const origin = { origin: topology.url };
    await signIn(page, topology);
    const token = await engine.mint(["sandboxes:read", "sandboxes:write"]);
    const added = await page.request.post(`${topology.url}/api/connections`, {
      data: { name: "Engine", base_url: engine.origin, token },
      headers: origin,
    });
    expect(added.status(), await added.text()).toBe(201);

    const created = await page.request.post(`${topology.url}/api/v1/sandboxes`, {
      data: { template: "python-3.12", timeout_seconds: 600, metadata: { spec: "multi-instance" } },
      headers: origin,
    });
    expect(created.status(), await created.text()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    try {
      // The token was encrypted by one instance; both decrypt it (one BATON_SECRET).
      const servedOn = new Set<string>();
      for (let i = 0; i < 4; i++) {
        const res = await page.request.get(`${topology.url}/api/v1/sandboxes/${id}`);
        expect(res.status(), await res.text()).toBe(200);
        servedOn.add(servedBy(topology, res).name);
      }
      expect([...servedOn].sort()).toEqual(["baton-a", "baton-b"]);

      const problems = watchForErrors(page);
      const sockets: string[] = [];
      page.on("websocket", (ws) => sockets.push(ws.url()));
      await page.goto(`${topology.url}/sandboxes/${id}/terminal`);
      await page.getByRole("button", { name: /^(Open|New) terminal$/ }).click();
      const terminal = page.locator('[role="tabpanel"]:not([hidden]) [data-testid="terminal"]');
      await expect(terminal).toHaveAttribute("data-status", "ready", { timeout: 30_000 });
      await terminal.click();
      await page.keyboard.type("echo through-nginx-$((6*7))");
      await page.keyboard.press("Enter");
      await expect
        .poll(() => terminal.locator(".xterm-rows").innerText(), { timeout: 15_000 })
        .toMatch(/through-nginx-42/);
      // The WebSocket went through the balancer, upgraded there.
      const relay = sockets.find((u) => /\/pty\/[^/]+\/ws(\?|$)/.test(u));
      expect(relay).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:${new URL(topology.url).port}/`));
      expect(problems).toEqual([]);
    } finally {
      await page.request.delete(`${topology.url}/api/v1/sandboxes/${id}`, { headers: origin }).catch(() => undefined);
    }
  });

  test("behind the balancer, Host and Origin are still checked; an instance answers only to BATON_URL @db", async ({
    page,
    multi,
  }) => {
    const { topology } = multi;
    const balancer = Number(new URL(topology.url).port);
    // Another name reaching the balancer (DNS rebinding): nginx passes the Host on, Baton refuses it.
    expect(await statusOf(balancer, `evil.example:${balancer}`, "/api/me")).toBe(421);
    // Straight to an instance, under its own address: not Baton's public origin.
    const a = topology.instances[0]!;
    expect(await statusOf(a.port, `127.0.0.1:${a.port}`, "/login")).toBe(421);
    // A cross-site POST through the balancer, on either instance.
    await signIn(page, topology);
    for (let i = 0; i < 2; i++) {
      const res = await page.request.post(`${topology.url}/api/auth/logout-everywhere`, {
        headers: { origin: "http://evil.example" },
      });
      expect(res.status()).toBe(403);
      expect(await res.json()).toMatchObject({ code: "bad_origin" });
    }
  });

  test("housekeeping runs in one instance: it holds the lease in the shared database @db", async ({ multi }) => {
    const { topology } = multi;
    // The first pass comes 30 s after each instance started; both try, one takes the period.
    await expect
      .poll(
        async () =>
          (await query<{ holder: string }>(multi.databaseUrl, "select holder from leases where name = 'housekeeping'"))
            .length,
        { timeout: 60_000 },
      )
      .toBe(1);
    const [lease] = await query<{ holder: string; acquired_at: number; expires_at: number }>(
      multi.databaseUrl,
      "select holder, acquired_at::float8 as acquired_at, expires_at::float8 as expires_at from leases where name = 'housekeeping'",
    );
    const holders = topology.instances.filter((i) => lease!.holder.includes(`/${i.pid}/`));
    expect(holders).toHaveLength(1);
    expect(lease!.expires_at - lease!.acquired_at).toBe(60 * 60_000);
  });
});

async function signIn(page: Page, topology: Topology): Promise<void> {
  const res = await page.request.post(`${topology.url}/api/auth/login`, {
    data: { email: OWNER.email, password: OWNER.password },
    headers: { origin: topology.url },
  });
  expect(res.status(), await res.text()).toBe(200);
}
