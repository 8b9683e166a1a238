import "server-only";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { NETWORK_MODES, SIZES } from "../../orkestr/schemas/sandboxes";
import { DEFAULT_OUTPUT_BYTES, MAX_OUTPUT_BYTES, cutMarker, cutUtf8 } from "../../mcp/output-cut";
import { refusalOf, refusalText } from "../../mcp/refusal-text";
import { callV1, type V1Call, type V1Route } from "./v1-call";

// The MCP tools: each is one call of Baton's /api/v1 under the token's role (lib/server/mcp/v1-call.ts),
// described for an agent, with the hints an MCP client uses to decide what to ask a person about.

/** Told after each tool call: which tool, on which sandbox, and how it went (the audit entry). */
export type ToolCallRecorder = (call: {
  tool: string;
  sandboxId: string | null;
  status: number;
  /** The refusal's code (spend_cap_reached, forbidden…), or null when it went through. */
  code: string | null;
}) => Promise<void>;

const sandboxId = z
  .string()
  .min(1)
  .max(100)
  .describe("The sandbox's id (sbx_…), as list_sandboxes or create_sandbox gave it.");
/** Files: the contract's 10 MiB per JSON file body. */
const MAX_FILE_BYTES = 10 * 1024 * 1024;
const DEFAULT_READ_BYTES = 256 * 1024;

const READ: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
const WRITE = (extra: Partial<ToolAnnotations>): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
  ...extra,
});

function ok(value: unknown, text?: string): CallToolResult {
  return { content: [{ type: "text", text: text ?? JSON.stringify(value, null, 2) }] };
}

function failed(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

export function registerTools(server: McpServer, from: Request, record: ToolCallRecorder): void {
  /** One v1 call: its body on success, else the refusal as a tool error (and always one audit entry). */
  async function call(
    tool: string,
    action: string,
    which: V1Route,
    args: V1Call,
    sandbox: string | null,
  ): Promise<{ ok: true; body: unknown } | { ok: false; result: CallToolResult }> {
    const answer = await callV1(from, which, args);
    const refusal = answer.status < 400 ? null : refusalOf(answer.status, answer.body);
    await record({
      tool,
      sandboxId: sandbox ?? createdId(answer.body),
      status: answer.status,
      code: refusal ? (refusal.code ?? String(answer.status)) : null,
    });
    if (!refusal) return { ok: true, body: answer.body };
    return { ok: false, result: failed(refusalText(action, refusal)) };
  }

  server.registerTool(
    "list_sandboxes",
    {
      title: "List sandboxes",
      description:
        "List the team's sandboxes this token can see, newest first. Terminated ones appear only when status is 'terminated'.",
      inputSchema: {
        status: z
          .string()
          .max(100)
          .optional()
          .describe("Only these states, comma-separated: creating, running, paused, terminated, …"),
        limit: z.number().int().min(1).max(100).optional().describe("At most this many (default: the server's page)."),
      },
      annotations: READ,
    },
    async ({ status, limit }) => {
      const r = await call(
        "list_sandboxes",
        "list sandboxes",
        "GET /sandboxes",
        {
          query: { status, limit: limit?.toString() },
        },
        null,
      );
      return r.ok ? ok(r.body) : r.result;
    },
  );

  server.registerTool(
    "create_sandbox",
    {
      title: "Create a sandbox",
      description:
        "Create a VM-isolated sandbox from a template (default python-3.12) and wait until it runs. It costs money while it runs: terminate it when done. The team's spend caps apply.",
      inputSchema: {
        template: z
          .string()
          .min(1)
          .max(200)
          .optional()
          .describe("Base image or template id (python-3.12, node-22, debian-12, tmpl_…)."),
        size: z
          .enum(SIZES)
          .optional()
          .describe("small = 1 vCPU / 1 GiB, medium = 2 vCPU / 4 GiB, large = 4 vCPU / 8 GiB."),
        network: z
          .enum(NETWORK_MODES)
          .optional()
          .describe("off (default: no network), restricted (allow-listed domains) or open."),
        timeout_seconds: z.number().int().min(10).max(86_400).optional().describe("Seconds until it stops by itself."),
        env: z.record(z.string(), z.string()).optional().describe("Environment variables for its processes."),
        metadata: z
          .record(z.string(), z.string())
          .optional()
          .describe("Labels (keys starting with baton. are Baton's)."),
      },
      annotations: WRITE({ openWorldHint: true }),
    },
    async (args) => {
      const r = await call(
        "create_sandbox",
        "create a sandbox",
        "POST /sandboxes",
        {
          body: { ...args, template: args.template ?? "python-3.12" },
        },
        null,
      );
      return r.ok ? ok(r.body) : r.result;
    },
  );

  server.registerTool(
    "get_sandbox",
    {
      title: "Get a sandbox",
      description: "A sandbox's state, size, template, expiry and metadata.",
      inputSchema: { sandbox_id: sandboxId },
      annotations: READ,
    },
    async ({ sandbox_id }) => {
      const r = await call(
        "get_sandbox",
        "get the sandbox",
        "GET /sandboxes/{id}",
        { params: { id: sandbox_id } },
        sandbox_id,
      );
      return r.ok ? ok(r.body) : r.result;
    },
  );

  server.registerTool(
    "pause_sandbox",
    {
      title: "Pause a sandbox",
      description:
        "Snapshot and suspend a running sandbox: compute billing stops, its memory and files are kept. Pausing a paused sandbox does nothing.",
      inputSchema: { sandbox_id: sandboxId },
      annotations: WRITE({ idempotentHint: true }),
    },
    async ({ sandbox_id }) => {
      const r = await call(
        "pause_sandbox",
        "pause the sandbox",
        "POST /sandboxes/{id}/pause",
        { params: { id: sandbox_id } },
        sandbox_id,
      );
      return r.ok ? ok(r.body) : r.result;
    },
  );

  server.registerTool(
    "resume_sandbox",
    {
      title: "Resume a sandbox",
      description: "Resume a paused sandbox where it left off. The team's spend caps apply.",
      inputSchema: {
        sandbox_id: sandboxId,
        timeout_seconds: z.number().int().min(10).max(86_400).optional().describe("A new timeout from now."),
      },
      annotations: WRITE({}),
    },
    async ({ sandbox_id, timeout_seconds }) => {
      const r = await call(
        "resume_sandbox",
        "resume the sandbox",
        "POST /sandboxes/{id}/resume",
        {
          params: { id: sandbox_id },
          body: timeout_seconds === undefined ? {} : { timeout_seconds },
        },
        sandbox_id,
      );
      return r.ok ? ok(r.body) : r.result;
    },
  );

  server.registerTool(
    "terminate_sandbox",
    {
      title: "Terminate a sandbox",
      description:
        "Stop a sandbox for good: its processes and its /workspace and /tmp are gone (volumes and named snapshots stay). Terminating a terminated sandbox does nothing.",
      inputSchema: { sandbox_id: sandboxId },
      annotations: WRITE({ destructiveHint: true, idempotentHint: true }),
    },
    async ({ sandbox_id }) => {
      const r = await call(
        "terminate_sandbox",
        "terminate the sandbox",
        "DELETE /sandboxes/{id}",
        { params: { id: sandbox_id } },
        sandbox_id,
      );
      return r.ok ? ok({ terminated: sandbox_id }, `Terminated ${sandbox_id}.`) : r.result;
    },
  );

  server.registerTool(
    "exec",
    {
      title: "Run a command",
      description:
        "Run a shell command (sh -c) in a sandbox to completion and get its exit code, stdout, stderr and duration. A non-zero exit is a result, not an error. Each output stream is cut at max_output_bytes, with a marker saying how much was left out.",
      inputSchema: {
        sandbox_id: sandboxId,
        command: z.string().min(1).max(100_000).describe('The command line, e.g. python3 -c "print(6*7)".'),
        cwd: z.string().startsWith("/").max(4096).optional().describe("Working directory (default /workspace)."),
        env: z.record(z.string(), z.string()).optional(),
        timeout_seconds: z
          .number()
          .int()
          .min(1)
          .max(3600)
          .optional()
          .describe("Kill it after this many seconds (default 60); then exit_code is 124 and timed_out true."),
        max_output_bytes: z
          .number()
          .int()
          .min(1)
          .max(MAX_OUTPUT_BYTES)
          .optional()
          .describe(
            `Per stream, at most this many bytes come back (default ${DEFAULT_OUTPUT_BYTES}, at most ${MAX_OUTPUT_BYTES}).`,
          ),
      },
      annotations: WRITE({ destructiveHint: true, openWorldHint: true }),
    },
    async ({ sandbox_id, max_output_bytes, ...body }) => {
      const r = await call(
        "exec",
        "run the command",
        "POST /sandboxes/{id}/exec",
        { params: { id: sandbox_id }, body },
        sandbox_id,
      );
      if (!r.ok) return r.result;
      const res = (r.body ?? {}) as {
        stdout?: string;
        stderr?: string;
        exit_code?: number;
        duration_ms?: number;
        timed_out?: boolean;
        truncated?: boolean;
      };
      const limit = max_output_bytes ?? DEFAULT_OUTPUT_BYTES;
      const out = cutUtf8(res.stdout ?? "", limit);
      const err = cutUtf8(res.stderr ?? "", limit);
      // The upstream's `truncated` does not say which stream it cut (at 1 MiB each): the full one.
      const upstreamCut = (s: string | undefined) =>
        res.truncated === true && Buffer.byteLength(s ?? "") >= MAX_OUTPUT_BYTES;
      const result = {
        exit_code: res.exit_code ?? null,
        duration_ms: res.duration_ms ?? null,
        timed_out: res.timed_out ?? false,
        stdout: out.text + cutMarker("stdout", out, upstreamCut(res.stdout)),
        stderr: err.text + cutMarker("stderr", err, upstreamCut(res.stderr)),
        output_cut: out.cutBytes > 0 || err.cutBytes > 0 || res.truncated === true,
      };
      return { content: [{ type: "text", text: JSON.stringify(result, null, 2) }], structuredContent: result };
    },
  );

  server.registerTool(
    "read_file",
    {
      title: "Read a file",
      description:
        "Read a file from a sandbox. Text comes back as text; bytes that are not UTF-8 come back as base64 (encoding says which). Content beyond max_bytes is cut, with a marker. Files over 10 MiB cannot be read this way.",
      inputSchema: {
        sandbox_id: sandboxId,
        path: z.string().startsWith("/").max(4096).describe("Absolute path, e.g. /workspace/main.py."),
        max_bytes: z
          .number()
          .int()
          .min(1)
          .max(MAX_FILE_BYTES)
          .optional()
          .describe(`At most this many bytes (default ${DEFAULT_READ_BYTES}).`),
      },
      annotations: READ,
    },
    async ({ sandbox_id, path, max_bytes }) => {
      const r = await call(
        "read_file",
        `read ${path}`,
        "GET /sandboxes/{id}/files",
        { params: { id: sandbox_id }, query: { path } },
        sandbox_id,
      );
      if (!r.ok) return r.result;
      const file = (r.body ?? {}) as { type?: string; content?: string; size?: number; entries?: unknown };
      if (file.type === "directory") return failed(`${path} is a directory: use list_files.`);
      const bytes = Buffer.from(file.content ?? "", "base64");
      const limit = max_bytes ?? DEFAULT_READ_BYTES;
      const shown = bytes.subarray(0, limit);
      const cut = bytes.length - shown.length;
      const text = new TextDecoder("utf-8", { fatal: true });
      let decoded: string | null;
      try {
        decoded = text.decode(shown);
      } catch {
        decoded = null;
      }
      // A cut inside a multi-byte character is not binary: retry without the partial character.
      if (decoded === null && cut > 0) {
        const whole = cutUtf8(bytes.toString("utf8"), limit);
        if (!whole.text.includes("\uFFFD")) decoded = whole.text;
      }
      const marker =
        cut > 0 ? `\n[file cut: ${cut} more bytes not shown (max_bytes); the file has ${bytes.length}]` : "";
      const result =
        decoded !== null
          ? { path, size: bytes.length, encoding: "text", content: decoded + marker }
          : { path, size: bytes.length, encoding: "base64", content: shown.toString("base64"), cut_bytes: cut };
      return { content: [{ type: "text", text: JSON.stringify(result, null, 2) }], structuredContent: result };
    },
  );

  server.registerTool(
    "write_file",
    {
      title: "Write a file",
      description:
        "Write a file in a sandbox (parents are created; an existing file is replaced). Content is text, or base64 for bytes, up to 10 MiB.",
      inputSchema: {
        sandbox_id: sandboxId,
        path: z.string().startsWith("/").max(4096).describe("Absolute path, e.g. /workspace/main.py."),
        content: z
          .string()
          .max(Math.ceil((MAX_FILE_BYTES * 4) / 3) + 4)
          .describe("The file's content."),
        encoding: z.enum(["text", "base64"]).optional().describe("text (default) or base64."),
        mode: z
          .string()
          .regex(/^0?[0-7]{3}$/)
          .optional()
          .describe("Permissions, e.g. 0755 for a script."),
      },
      annotations: WRITE({ destructiveHint: true, idempotentHint: true }),
    },
    async ({ sandbox_id, path, content, encoding, mode }) => {
      const bytes = encoding === "base64" ? Buffer.from(content, "base64") : Buffer.from(content, "utf8");
      if (bytes.length > MAX_FILE_BYTES)
        return failed(`Could not write ${path}: ${bytes.length} bytes is over the 10 MiB limit.`);
      const r = await call(
        "write_file",
        `write ${path}`,
        "POST /sandboxes/{id}/files",
        {
          params: { id: sandbox_id },
          body: { path, content: bytes.toString("base64"), encoding: "base64", ...(mode ? { mode } : {}) },
        },
        sandbox_id,
      );
      return r.ok ? ok(r.body, `Wrote ${bytes.length} bytes to ${path}.`) : r.result;
    },
  );

  server.registerTool(
    "list_files",
    {
      title: "List a directory",
      description: "The entries of a directory in a sandbox: name, whether it is a directory, size.",
      inputSchema: {
        sandbox_id: sandboxId,
        path: z.string().startsWith("/").max(4096).optional().describe("Default /workspace."),
      },
      annotations: READ,
    },
    async ({ sandbox_id, path }) => {
      const dir = path ?? "/workspace";
      const r = await call(
        "list_files",
        `list ${dir}`,
        "GET /sandboxes/{id}/files",
        { params: { id: sandbox_id }, query: { path: dir } },
        sandbox_id,
      );
      if (!r.ok) return r.result;
      const body = (r.body ?? {}) as { type?: string; entries?: unknown };
      if (body.type === "file") return failed(`${dir} is a file: use read_file.`);
      return ok({ path: dir, entries: body.entries ?? r.body });
    },
  );

  server.registerTool(
    "snapshot_sandbox",
    {
      title: "Snapshot a sandbox",
      description:
        "Save a running sandbox as a named snapshot (it keeps running). Any number of sandboxes can then be forked from it with fork_sandbox.",
      inputSchema: {
        sandbox_id: sandboxId,
        name: z.string().min(1).max(100).describe("A name unique in the team, e.g. after-setup."),
      },
      annotations: WRITE({}),
    },
    async ({ sandbox_id, name }) => {
      const r = await call(
        "snapshot_sandbox",
        "snapshot the sandbox",
        "POST /sandboxes/{id}/snapshots",
        { params: { id: sandbox_id }, body: { name } },
        sandbox_id,
      );
      return r.ok ? ok(r.body) : r.result;
    },
  );

  server.registerTool(
    "fork_sandbox",
    {
      title: "Fork a sandbox from a snapshot",
      description:
        "Create a new sandbox from a named snapshot (its id or name): the files and installed packages of the moment it was taken. The team's spend caps apply.",
      inputSchema: {
        snapshot: z.string().min(1).max(200).describe("The snapshot's id (snap_…) or name."),
        timeout_seconds: z.number().int().min(10).max(86_400).optional(),
        metadata: z.record(z.string(), z.string()).optional(),
      },
      annotations: WRITE({ openWorldHint: true }),
    },
    async (args) => {
      const r = await call("fork_sandbox", "fork a sandbox", "POST /sandboxes", { body: args }, null);
      return r.ok ? ok(r.body) : r.result;
    },
  );

  server.registerTool(
    "get_preview_url",
    {
      title: "Get a preview URL",
      description: "The public URL of a port a sandbox serves on (needs a networked sandbox and a plan with previews).",
      inputSchema: { sandbox_id: sandboxId, port: z.number().int().min(1).max(65_535) },
      annotations: READ,
    },
    async ({ sandbox_id, port }) => {
      const r = await call(
        "get_preview_url",
        `get the preview URL of port ${port}`,
        "GET /sandboxes/{id}/previews/{port}",
        {
          params: { id: sandbox_id, port: String(port) },
        },
        sandbox_id,
      );
      return r.ok ? ok(r.body) : r.result;
    },
  );

  server.registerTool(
    "get_limits",
    {
      title: "Get limits",
      description: "The plan's limits: sizes, regions, concurrency, timeouts, snapshots.",
      annotations: READ,
    },
    async () => {
      const r = await call("get_limits", "read the limits", "GET /limits", {}, null);
      return r.ok ? ok(r.body) : r.result;
    },
  );

  server.registerTool(
    "get_usage",
    {
      title: "Get this month's usage",
      description:
        "CPU-seconds, GiB-seconds and cost in EUR of this calendar month (UTC) so far, per day and per sandbox.",
      annotations: READ,
    },
    async () => {
      const now = new Date();
      const from = `${now.toISOString().slice(0, 8)}01`;
      const r = await call(
        "get_usage",
        "read the usage",
        "GET /usage",
        { query: { from, to: now.toISOString().slice(0, 10) } },
        null,
      );
      return r.ok ? ok(r.body) : r.result;
    },
  );
}

/** The id of what a create or fork made, for the audit entry. */
function createdId(body: unknown): string | null {
  const id = body && typeof body === "object" ? (body as { id?: unknown }).id : undefined;
  return typeof id === "string" ? id : null;
}
