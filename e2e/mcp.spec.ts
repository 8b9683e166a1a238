import type { APIRequestContext } from "@playwright/test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect, test } from "./fixtures";
import { addMember, addTeamUser, signedInContext } from "./helpers";

// Its own console: these tests connect the local engine, and shell.spec needs the shared one unconnected.
test.use({ consoleInstance: "mcp" });

// @db: Baton's MCP endpoint (issue 23) driven by the MCP SDK's own client (Streamable HTTP) against
// a real `next start` and the real engine, authenticated with Baton API tokens made through
// /api/tokens: the owner's agent lists tools, creates a sandbox, runs python, writes and reads a
// file, snapshots and forks, and terminates; a viewer's agent is refused a create with a tool error
// that says what a person must do; a revoked token gets 401; a token of another team sees nothing of
// this one; an exec whose output is over the caller's limit comes back cut, with a marker.

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
