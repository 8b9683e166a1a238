import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { bearerChallenge } from "../../../lib/server/mcp/metadata";
import { knownBytes } from "../../../lib/server/request-bytes";
import { registerTools } from "../../../lib/server/mcp/tools";
import { route } from "../../../lib/server/route";

export const runtime = "nodejs";

const INSTRUCTIONS =
  "Baton gives you orkestr sandboxes (VM-isolated Linux machines) of your team, under your Baton token's role, the team's spend caps and its audit log. Create a sandbox, run commands and move files in it, snapshot and fork it, and terminate it when you are done: running sandboxes cost money. When a tool says a person must act, stop and tell the person.";

/**
 * One JSON Schema validator for every request's server: the SDK makes a new Ajv (with its formats)
 * per server otherwise, several milliseconds of each stateless request, for elicitation Baton never uses.
 */
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();

/** The MCP messages of one request: a tool call's file write is the largest (10 MiB as base64, plus JSON). */
const MAX_MCP_BODY = 15 * 1024 * 1024;

/**
 * The request for the transport, and its JSON-RPC messages when the console server's fast path read
 * the body already (lib/server/request-bytes.ts: then the Request itself carries none). Bytes that
 * are not JSON go to the transport in a Request of their own, so it answers its own parse error.
 */
function messagesOf(req: Request): [Request, { parsedBody: unknown }?] {
  const bytes = knownBytes(req);
  if (bytes === undefined) return [req];
  try {
    return [req, { parsedBody: JSON.parse(new TextDecoder().decode(bytes)) as unknown }];
  } catch {
    return [new Request(req.url, { method: req.method, headers: req.headers, body: Buffer.from(bytes) })];
  }
}

// POST /api/mcp – Baton's MCP server (Streamable HTTP, stateless: any Baton instance answers any
// request). Bearer Baton tokens only (a
// browser session is not an MCP client); every tool call is one call of Baton's own /api/v1 handlers
// under the token's role, audited as mcp.tool_call with the tool and the sandbox.
const mcp = route(
  {
    auth: "user",
    perm: "sandboxes.read",
    tokens: {
      only: true,
      challenge: (req, presented) => bearerChallenge(req.headers, presented ? "invalid_token" : undefined),
    },
  },
  async ({ req, audit }) => {
    const server = new McpServer(
      { name: "baton", version: "0.1.0" },
      { instructions: INSTRUCTIONS, jsonSchemaValidator: SCHEMA_VALIDATOR },
    );
    registerTools(server, req, async ({ tool, sandboxId, status, code }) => {
      await audit("mcp.tool_call", {
        targetType: sandboxId ? "sandbox" : null,
        targetId: sandboxId,
        result: code ?? "ok",
        data: { tool, status },
      });
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MAX_MCP_BODY,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(...messagesOf(req));
    } finally {
      await server.close();
    }
  },
);

// Stateless and JSON-answered: no server-initiated stream to GET and no session to DELETE, so both
// are the 405 the Streamable HTTP transport allows (Next answers them for a route without them).
export const POST = mcp;
