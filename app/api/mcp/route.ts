import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { bearerChallenge } from "../../../lib/server/mcp/metadata";
import { registerTools } from "../../../lib/server/mcp/tools";
import { route } from "../../../lib/server/route";

export const runtime = "nodejs";

const INSTRUCTIONS =
  "Baton gives you orkestr sandboxes (VM-isolated Linux machines) of your team, under your Baton token's role, the team's spend caps and its audit log. Create a sandbox, run commands and move files in it, snapshot and fork it, and terminate it when you are done: running sandboxes cost money. When a tool says a person must act, stop and tell the person.";

// /api/mcp – Baton's MCP server (Streamable HTTP, stateless: any Baton instance answers any request).
// Bearer Baton tokens only (a browser session is not an MCP client); every tool call is one call of
// Baton's own /api/v1 handlers under the token's role, audited as mcp.tool_call with the tool and the sandbox.
const mcp = route({ auth: "user", perm: "sandboxes.read" }, async ({ req, audit }) => {
  const server = new McpServer({ name: "baton", version: "0.1.0" }, { instructions: INSTRUCTIONS });
  registerTools(server, req, async ({ tool, sandboxId, status }) => {
    await audit("mcp.tool_call", {
      targetType: sandboxId ? "sandbox" : null,
      targetId: sandboxId,
      result: status < 400 ? "ok" : String(status),
      data: { tool, status },
    });
  });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(req);
  } finally {
    await server.close();
  }
});

/** Without a bearer token, or with one Baton refuses: 401 with the challenge that points at the metadata. */
async function handle(req: Request, ctx: { params: Promise<Record<string, string>> }): Promise<Response> {
  if (!/^Bearer\s+\S/i.test(req.headers.get("authorization") ?? "")) {
    return Response.json(
      {
        detail: "Baton's MCP endpoint needs a Baton API token: Authorization: Bearer bat_… (Settings → API tokens).",
        code: "unauthorized",
      },
      { status: 401, headers: { "www-authenticate": bearerChallenge(req.headers), "cache-control": "no-store" } },
    );
  }
  const res = await mcp(req, ctx);
  if (res.status === 401) res.headers.set("www-authenticate", bearerChallenge(req.headers, "invalid_token"));
  return res;
}

export const POST = handle;
export const GET = handle;
export const DELETE = handle;
