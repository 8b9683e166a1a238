import type { APIRequestContext } from "@playwright/test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect, test } from "./fixtures";
import type { CapsView } from "../lib/usage/caps-view";
import { addMember, addTeamUser, signedInContext, watchForErrors } from "./helpers";

// Its own console: these tests connect the local engine, and shell.spec needs the shared one unconnected.
test.use({ consoleInstance: "mcp" });

// @db: Baton's MCP endpoint (issue 23) driven by the MCP SDK's own client (Streamable HTTP) against
// a real `next start` and the real engine, authenticated with Baton API tokens made through
// /api/tokens: the owner's agent lists tools, creates a sandbox, runs python, writes and reads a
// file, snapshots and forks, and terminates; a viewer's agent is refused a create with a tool error
// that says what a person must do; a revoked token gets 401; a token of another team sees nothing of
// this one; an exec whose output is over the caller's limit comes back cut, with a marker. The
// tools the first test does not reach (pause, resume, preview URL, usage, limits) are checked by
// their effect on the real sandbox and the engine's own figures; the console's list and sandbox
// page say a sandbox was made "via MCP (<token's name>)"; and a team spend cap that is reached
// comes back from create_sandbox as a tool error that says what happened and what a person must do.

const VIEWER = { email: "mcp-viewer@example.com", password: "a viewer's correct horse battery" };
const OTHER = { email: "mcp-other@example.com", password: "another team's correct horse battery", team: "Elsewhere" };

async function tokenFor(request: APIRequestContext, baseURL: string, name: string, scope: "read" | "write") {
  const res = await request.post("/api/tokens", { data: { name, scope }, headers: { origin: baseURL } });
  expect(res.status(), await res.text()).toBe(201);
  return ((await res.json()) as { token: string; api_token: { id: string } }).token;
}

async function connect(baseURL: string, token: string): Promise<Client> {
  const client = new Client({ name: "baton-e2e", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL("/api/mcp", baseURL), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

function textOf(result: unknown): string {
  const content = (result as CallToolResult).content ?? [];
  return content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { result, text: textOf(result), json: () => JSON.parse(textOf(result)) as Record<string, unknown> };
}

test("an agent drives sandboxes through Baton's MCP endpoint under its token's role and team @db", async ({
  connected: page,
  servers,
  baseURL,
}) => {
  test.setTimeout(180_000);
  const token = await tokenFor(page.request, baseURL!, "mcp agent", "write");
  const client = await connect(baseURL!, token);
  const made: string[] = [];
  try {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of [
      "list_sandboxes",
      "create_sandbox",
      "get_sandbox",
      "pause_sandbox",
      "resume_sandbox",
      "terminate_sandbox",
      "exec",
      "read_file",
      "write_file",
      "list_files",
      "snapshot_sandbox",
      "fork_sandbox",
      "get_preview_url",
      "get_limits",
      "get_usage",
    ])
      expect(byName.has(name), name).toBe(true);
    expect(byName.get("terminate_sandbox")!.annotations).toMatchObject({ destructiveHint: true, idempotentHint: true });
    expect(byName.get("list_sandboxes")!.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get("exec")!.inputSchema.properties).toHaveProperty("max_output_bytes");

    // Create, and the sandbox carries its creator and how it was made.
    const created = await call(client, "create_sandbox", { template: "python-3.12" });
    expect(created.result.isError, created.text).toBeFalsy();
    const sbx = created.json() as { id: string; status: string };
    made.push(sbx.id);
    expect(sbx.status).toBe("running");
    const engineView = await servers.engine.api<{ metadata: Record<string, string> }>("GET", `/sandboxes/${sbx.id}`);
    expect(engineView.body.metadata).toMatchObject({ "baton.via": "mcp" });
    expect(engineView.body.metadata["baton.user"]).toBeTruthy();

    const exec = await call(client, "exec", { sandbox_id: sbx.id, command: 'python3 -c "print(6*7)"' });
    expect(exec.result.isError, exec.text).toBeFalsy();
    expect(exec.json()).toMatchObject({ exit_code: 0, stdout: "42\n", output_cut: false });

    const wrote = await call(client, "write_file", {
      sandbox_id: sbx.id,
      path: "/workspace/hello.txt",
      content: "héllo\n",
    });
    expect(wrote.result.isError, wrote.text).toBeFalsy();
    const read = await call(client, "read_file", { sandbox_id: sbx.id, path: "/workspace/hello.txt" });
    expect(read.json()).toMatchObject({ encoding: "text", content: "héllo\n" });
    const listed = await call(client, "list_files", { sandbox_id: sbx.id, path: "/workspace" });
    expect(listed.text).toContain("hello.txt");

    // Over the caller's limit: cut, with a marker that says how much is missing.
    const big = await call(client, "exec", {
      sandbox_id: sbx.id,
      command: "yes | head -c 100000",
      max_output_bytes: 1000,
    });
    const bigOut = big.json() as { stdout: string; output_cut: boolean };
    expect(bigOut.output_cut).toBe(true);
    expect(bigOut.stdout.startsWith("y\n".repeat(500))).toBe(true);
    expect(bigOut.stdout).toContain("[output cut: 99000 more bytes of stdout not shown (max_output_bytes)]");

    const snap = await call(client, "snapshot_sandbox", { sandbox_id: sbx.id, name: `mcp-${Date.now()}` });
    expect(snap.result.isError, snap.text).toBeFalsy();
    const fork = await call(client, "fork_sandbox", { snapshot: (snap.json() as { id: string }).id });
    expect(fork.result.isError, fork.text).toBeFalsy();
    const child = fork.json() as { id: string };
    made.push(child.id);
    const inChild = await call(client, "read_file", { sandbox_id: child.id, path: "/workspace/hello.txt" });
    expect(inChild.json()).toMatchObject({ content: "héllo\n" });

    const limits = await call(client, "get_limits");
    expect(limits.result.isError, limits.text).toBeFalsy();

    for (const id of made) {
      const gone = await call(client, "terminate_sandbox", { sandbox_id: id });
      expect(gone.result.isError, gone.text).toBeFalsy();
    }
    const after = await call(client, "get_sandbox", { sandbox_id: sbx.id });
    expect(after.json()).toMatchObject({ status: "terminated" });

    // Each call is in the audit log with its tool and its sandbox.
    const audit = await page.request.get("/api/audit?action=mcp.tool_call&limit=100");
    expect(audit.status()).toBe(200);
    const rows = ((await audit.json()) as { items: { target_id: string | null; data: { tool?: string } }[] }).items;
    expect(rows.some((r) => r.data.tool === "exec" && r.target_id === sbx.id)).toBe(true);
    expect(rows.some((r) => r.data.tool === "create_sandbox" && r.target_id === sbx.id)).toBe(true);
  } finally {
    await client.close();
    for (const id of made) await servers.engine.api("DELETE", `/sandboxes/${id}`);
  }

  // Revoked: the next request is a 401 with the challenge that names the resource metadata.
  const tokens = (await (await page.request.get("/api/tokens")).json()) as { tokens: { id: string; name: string }[] };
  const id = tokens.tokens.find((t) => t.name === "mcp agent")!.id;
  expect((await page.request.delete(`/api/tokens/${id}`, { headers: { origin: baseURL! } })).ok()).toBe(true);
  const refused = await page.request.post("/api/mcp", {
    headers: { authorization: `Bearer ${token}`, accept: "application/json, text/event-stream" },
    data: { jsonrpc: "2.0", id: 1, method: "tools/list" },
  });
  expect(refused.status()).toBe(401);
  expect(refused.headers()["www-authenticate"]).toContain('error="invalid_token"');
  expect(refused.headers()["www-authenticate"]).toContain("/.well-known/oauth-protected-resource/api/mcp");
  const metadata = await page.request.get("/.well-known/oauth-protected-resource/api/mcp");
  expect(await metadata.json()).toMatchObject({ resource: `${baseURL}/api/mcp`, bearer_methods_supported: ["header"] });
});

/** A sandbox's status as Baton's API gives it (the session's, not the agent's, view). */
async function statusOf(request: APIRequestContext, id: string): Promise<string> {
  const res = await request.get(`/api/v1/sandboxes/${id}`);
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { status: string }).status;
}

test("an agent pauses and resumes a sandbox, gets its preview URL, limits and this month's usage; the console says it was made via MCP with the token's name @db", async ({
  connected: page,
  servers,
  baseURL,
}) => {
  test.setTimeout(180_000);
  const problems = watchForErrors(page);
  const client = await connect(baseURL!, await tokenFor(page.request, baseURL!, "claude on ci", "write"));
  const made: string[] = [];
  try {
    // Networked, so it has ports to preview.
    const created = await call(client, "create_sandbox", { network: "restricted", timeout_seconds: 600 });
    expect(created.result.isError, created.text).toBeFalsy();
    const id = (created.json() as { id: string }).id;
    made.push(id);

    // The console names how it was made and with which token, in the list and on the sandbox's page.
    await page.goto("/sandboxes");
    const row = page.getByRole("table", { name: "Sandboxes" }).locator(`[role=row][data-sandbox-id="${id}"]`);
    await expect(row.getByTestId("created-by")).toHaveText("You via MCP (claude on ci)");
    await page.goto(`/sandboxes/${id}`);
    await expect(page.getByTestId("field-creator")).toHaveText("You via MCP (claude on ci)");
    await expect(page.getByTestId("created-via")).toHaveText("via MCP (claude on ci)");
    // Off the sandbox page before it is paused: its live views are not what this test watches.
    await page.goto("/");

    // A server in the sandbox: its preview URL is the engine's preview host for the port (left as
    // the upstream gives it, README), and it says when something listens there.
    const served = await call(client, "exec", {
      sandbox_id: id,
      command:
        "echo kept > /workspace/before-pause.txt && nohup python3 -m http.server 8000 --directory /workspace >/dev/null 2>&1 &",
    });
    expect(served.json(), served.text).toMatchObject({ exit_code: 0 });
    const host = `8000-${id.toLowerCase()}.sbx.localhost:${new URL(servers.engine.origin).port}`;
    let preview: Record<string, unknown> = {};
    await expect
      .poll(
        async () => {
          const r = await call(client, "get_preview_url", { sandbox_id: id, port: 8000 });
          expect(r.result.isError, r.text).toBeFalsy();
          preview = r.json();
          return preview.listening;
        },
        { timeout: 15_000 },
      )
      .toBe(true);
    expect(preview).toEqual({ port: 8000, host, url: `http://${host}`, auth_required: false, listening: true });
    const upstream = await servers.engine.api("GET", `/sandboxes/${id}/previews/8000`);
    expect(preview).toEqual(upstream.body);

    // Pause: the sandbox is paused (Baton's API says so), and a pause of a paused one does nothing.
    const paused = await call(client, "pause_sandbox", { sandbox_id: id });
    expect(paused.result.isError, paused.text).toBeFalsy();
    await expect.poll(() => statusOf(page.request, id), { timeout: 30_000 }).toBe("paused");
    const again = await call(client, "pause_sandbox", { sandbox_id: id });
    expect(again.result.isError, again.text).toBeFalsy();
    expect(await statusOf(page.request, id)).toBe("paused");
    const asleep = await call(client, "get_preview_url", { sandbox_id: id, port: 8000 });
    expect(asleep.json()).toMatchObject({ url: `http://${host}`, listening: null });

    // Resume: running again where it left off, its files and its server still there.
    const resumed = await call(client, "resume_sandbox", { sandbox_id: id, timeout_seconds: 600 });
    expect(resumed.result.isError, resumed.text).toBeFalsy();
    await expect.poll(() => statusOf(page.request, id), { timeout: 30_000 }).toBe("running");
    const kept = await call(client, "read_file", { sandbox_id: id, path: "/workspace/before-pause.txt" });
    expect(kept.json()).toMatchObject({ content: "kept\n" });
    await expect
      .poll(async () => (await call(client, "get_preview_url", { sandbox_id: id, port: 8000 })).json().listening, {
        timeout: 15_000,
      })
      .toBe(true);

    // The plan's limits and this month's usage (UTC, from the 1st to today): the engine's own answers.
    const limits = await call(client, "get_limits");
    expect(limits.result.isError, limits.text).toBeFalsy();
    expect(limits.json()).toEqual((await servers.engine.api("GET", "/limits")).body);
    const usage = await call(client, "get_usage");
    expect(usage.result.isError, usage.text).toBeFalsy();
    const today = new Date().toISOString().slice(0, 10);
    const first = `${today.slice(0, 8)}01`;
    const report = usage.json() as {
      currency: string;
      from: string;
      to: string;
      totals: { sandboxes_created: number; cpu_seconds: number; cost_eur: number };
      series: { date: string; sandboxes_created: number }[];
    };
    expect(report).toMatchObject({ currency: "EUR", from: `${first}T00:00:00Z`, to: `${today}T23:59:59Z` });
    expect(report.series.map((d) => d.date)).toHaveLength(Number(today.slice(8, 10)));
    expect(report.series[0]!.date).toBe(first);
    expect(report.series.at(-1)!.date).toBe(today);
    // This test's sandbox is among today's, and the month's count is the engine's.
    expect(report.series.at(-1)!.sandboxes_created).toBeGreaterThanOrEqual(1);
    const engineUsage = await servers.engine.api("GET", `/sandboxes/usage?from=${first}&to=${today}`);
    expect(report.totals.sandboxes_created).toBe(engineUsage.body.totals.sandboxes_created);
    expect(report.totals.cost_eur).toBeGreaterThanOrEqual(0);

    const gone = await call(client, "terminate_sandbox", { sandbox_id: id });
    expect(gone.result.isError, gone.text).toBeFalsy();

    // Each tool call is audited with its tool and the sandbox.
    const audit = await page.request.get("/api/audit?action=mcp.tool_call&limit=100");
    const rows = ((await audit.json()) as { items: { target_id: string | null; data: { tool?: string } }[] }).items;
    for (const tool of ["pause_sandbox", "resume_sandbox", "get_preview_url"])
      expect(
        rows.some((r) => r.data.tool === tool && r.target_id === id),
        tool,
      ).toBe(true);
    for (const tool of ["get_limits", "get_usage"])
      expect(
        rows.some((r) => r.data.tool === tool),
        tool,
      ).toBe(true);
  } finally {
    await client.close();
    for (const id of made) await servers.engine.api("DELETE", `/sandboxes/${id}`);
  }
  expect(problems).toEqual([]);
});

test("a reached team spend cap comes back from create_sandbox as a tool error that says what happened and what a person must do @db", async ({
  connected: page,
  servers,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const api = page.request;
  const headers = { origin: baseURL! };
  const capsOf = async () => ((await (await api.get("/api/usage/caps")).json()) as CapsView).caps;
  const before = (await capsOf()).find((c) => c.user_id === null && c.window === "month") ?? null;
  const client = await connect(baseURL!, await tokenFor(api, baseURL!, "capped agent", "write"));
  const made: string[] = [];
  try {
    // A monthly block cap of EUR 0.00 is below anything spent: set now, it acts at once (issue
    // 22), with no wait for the caps job's next run (a minute here).
    const set = await api.put("/api/usage/caps", {
      data: { window: "month", limit_micro: 0, action: "block" },
      headers,
    });
    expect(set.status(), await set.text()).toBe(200);
    const listedBefore = await call(client, "list_sandboxes");

    const refused = await call(client, "create_sandbox", { template: "python-3.12" });
    expect(refused.result.isError, refused.text).toBe(true);
    // What happened, in Baton's words (the cap, what is spent, who can raise it) …
    expect(refused.text).toMatch(
      /^Could not create a sandbox: .+'s monthly spend cap of €0\.00 is reached \(€[\d.,]+ spent this month, UTC\), so Baton does not create a sandbox\./,
    );
    expect(refused.text).toContain("can raise the cap on the Usage page");
    expect(refused.text).toContain("[spend_cap_reached, HTTP 402]");
    // … and what has to happen next, which the agent cannot do alone.
    expect(refused.text).toContain(
      "A person must act: a billing manager of the team raises or removes the cap on Baton's Usage page. Retrying will not help until then.",
    );
    // Nothing was made, and the refusal is in the audit log with its code.
    expect((await call(client, "list_sandboxes")).text).toBe(listedBefore.text);
    const audit = await api.get("/api/audit?action=mcp.tool_call&limit=100");
    const rows = ((await audit.json()) as { items: { result: string; data: { tool?: string; status?: number } }[] })
      .items;
    expect(rows.some((r) => r.data.tool === "create_sandbox" && r.result === "spend_cap_reached")).toBe(true);
  } finally {
    // The team's cap as it was, so the other tests of this console are not capped.
    const now = (await capsOf()).find((c) => c.user_id === null && c.window === "month");
    if (before) {
      const { window, limit_micro, action } = before;
      expect((await api.put("/api/usage/caps", { data: { window, limit_micro, action }, headers })).status()).toBe(200);
    } else if (now) expect((await api.delete(`/api/usage/caps/${now.id}`, { headers })).status()).toBe(200);
  }
  try {
    // Lifted: the same agent creates again.
    const created = await call(client, "create_sandbox", { template: "python-3.12" });
    expect(created.result.isError, created.text).toBeFalsy();
    made.push((created.json() as { id: string }).id);
  } finally {
    await client.close();
    for (const id of made) await servers.engine.api("DELETE", `/sandboxes/${id}`);
  }
});

test("a viewer's agent is refused a create with what to do; another team's agent sees nothing of this team @db", async ({
  connected: page,
  servers,
  browser,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const sbx = await page.request.post("/api/v1/sandboxes", {
    data: { template: "python-3.12" },
    headers: { origin: baseURL! },
  });
  expect(sbx.status()).toBe(201);
  const sandboxId = ((await sbx.json()) as { id: string }).id;
  addMember(servers, VIEWER, "viewer");
  addTeamUser(servers, OTHER, OTHER.team);
  const viewer = await signedInContext(browser, baseURL!, VIEWER);
  const other = await signedInContext(browser, baseURL!, OTHER);
  const viewerClient = await connect(baseURL!, await tokenFor(viewer.request, baseURL!, "viewer agent", "read"));
  const otherClient = await connect(baseURL!, await tokenFor(other.request, baseURL!, "other agent", "write"));
  try {
    const refused = await call(viewerClient, "create_sandbox", {});
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toContain("Could not create a sandbox");
    expect(refused.text).toContain("[forbidden, HTTP 403]");
    expect(refused.text).toContain("A person must act");
    // What a viewer may do, it does.
    const seen = await call(viewerClient, "get_sandbox", { sandbox_id: sandboxId });
    expect(seen.result.isError, seen.text).toBeFalsy();

    const foreign = await call(otherClient, "get_sandbox", { sandbox_id: sandboxId });
    expect(foreign.result.isError).toBe(true);
    expect(foreign.text).not.toContain('"status"');
    const list = await call(otherClient, "list_sandboxes");
    expect(list.text).not.toContain(sandboxId);
    const exec = await call(otherClient, "exec", { sandbox_id: sandboxId, command: "id" });
    expect(exec.result.isError).toBe(true);
  } finally {
    await viewerClient.close();
    await otherClient.close();
    await viewer.close();
    await other.close();
    await servers.engine.api("DELETE", `/sandboxes/${sandboxId}`);
  }
});

test("the endpoint's own answers on the console server: a body that is not JSON is the transport's parse error, a tools/list POST answers JSON, GET is 405", async ({
  connected: page,
  baseURL,
}) => {
  // /api/mcp is served by the console server's fast path, which reads small bodies before the
  // handler runs (lib/server/request-bytes.ts): the transport must still see every message.
  const token = await tokenFor(page.request, baseURL!, "raw agent", "read");
  const headers = {
    authorization: `Bearer ${token}`,
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
  };
  const broken = await page.request.post("/api/mcp", { headers, data: Buffer.from("{not json") });
  expect(broken.status()).toBe(400);
  expect(((await broken.json()) as { error: { code: number } }).error.code).toBe(-32700);

  const listed = await page.request.post("/api/mcp", {
    headers,
    data: { jsonrpc: "2.0", id: 7, method: "tools/list", params: {} },
  });
  expect(listed.status(), await listed.text()).toBe(200);
  const tools = ((await listed.json()) as { id: number; result: { tools: { name: string }[] } }).result.tools;
  expect(tools.map((t) => t.name)).toContain("exec");

  const get = await page.request.get("/api/mcp", { headers });
  expect(get.status()).toBe(405);
});
