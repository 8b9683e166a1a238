import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { accountOf } from "../auth.js";
import { ApiError } from "../errors.js";
import { CappedBuffer, runExec, type RunningExec } from "../runtime/exec.js";
import { ExecBody, SandboxIdParams } from "../schemas.js";
import { ExecResult } from "../responses.js";
import type { ResourcePlugin } from "./plugin.js";
import { openStream } from "./stream.js";

type ExecRequest = FastifyRequest<{
  Params: { id: string };
  Body: ExecBody;
  Querystring: { kill_on_disconnect?: string };
}>;

const tags = ["exec"];
const StreamQuery = z.object({
  kill_on_disconnect: z
    .string()
    .optional()
    .describe('"1" or "true": kill the command when the client disconnects (or the body\'s kill_on_disconnect)'),
});

/**
 * Exec, plain (POST /v1/sandboxes/:id/exec: run to completion, one JSON result) and streaming
 * (POST …/exec/stream, or …/exec with `stream: true` or an SSE/NDJSON Accept: chunk frames, then a
 * final frame with `exit_code`).
 */
export const execRoutes: ResourcePlugin = async (app, { ctx }) => {
  const { sandboxes, events } = ctx;

  /** Both exec routes validate the same params and body (their schemas below). */
  const prepare = async (request: FastifyRequest) => {
    const req = request as ExecRequest;
    const { row, live } = await sandboxes.running(accountOf(req), req.params.id);
    return { row, live, body: req.body, query: req.query };
  };

  app.post(
    "/sandboxes/:id/exec",
    {
      schema: {
        tags,
        summary: "Run a command to completion (streams instead with stream: true or an SSE/NDJSON Accept)",
        params: SandboxIdParams,
        body: ExecBody,
        querystring: StreamQuery,
        response: { 200: ExecResult },
      },
    },
    async (req, reply) => {
      if (req.body.stream === true || streamFormat(req.headers.accept) !== null) return stream(req, reply);
      const { row, live, body } = await prepare(req);
      const stdout = new CappedBuffer();
      const stderr = new CappedBuffer();
      const run = runExec(live.proc, command(body), {
        onStdout: (c) => stdout.push(c),
        onStderr: (c) => stderr.push(c),
      });
      const result = await run.done.catch((e: Error) => {
        throw ApiError.internal("Could not run the command in the sandbox", e, "sandbox_agent_unreachable");
      });
      events.record(row.id, "exec", {
        command: body.command.slice(0, 1000),
        exit_code: result.exit_code,
        duration_ms: result.duration_ms,
        timed_out: result.timed_out,
      });
      return {
        stdout: stdout.text(),
        stderr: stderr.text(),
        exit_code: result.exit_code,
        duration_ms: result.duration_ms,
        timed_out: result.timed_out,
        truncated: stdout.truncated || stderr.truncated,
      };
    },
  );

  app.post(
    "/sandboxes/:id/exec/stream",
    {
      // The stream's frames are not JSON bodies: no response schema (the summary says what they are).
      schema: {
        tags,
        summary:
          "Stream a command's output: SSE (default) or NDJSON (Accept: application/x-ndjson) frames " +
          "{stream, data[, encoding]}, then a final {is_final: true, exit_code, duration_ms, timed_out} (or " +
          "{is_final: true, error, code} when it could not run, or its token was revoked or expired: code token_revoked " +
          "or token_expired). At most ORKESTR_ENGINE_STREAMS_PER_TOKEN open streams per token and _PER_ACCOUNT per " +
          "account, else 429 too_many_streams",
        params: SandboxIdParams,
        body: ExecBody,
        querystring: StreamQuery,
      },
    },
    stream,
  );

  async function stream(req: FastifyRequest, reply: FastifyReply) {
    const { row, live, body, query } = await prepare(req);
    const killOnDisconnect = body.kill_on_disconnect ?? ["1", "true"].includes(String(query.kill_on_disconnect ?? ""));
    const ndjson = streamFormat(req.headers.accept) === "ndjson";
    const frame = (obj: unknown) => (ndjson ? `${JSON.stringify(obj)}\n` : `data: ${JSON.stringify(obj)}\n\n`);
    const keepalive = ndjson ? "\n" : ": keepalive\n\n";

    let clientGone = false;
    let run: RunningExec | null = null;
    const res = openStream(req, reply, ctx.streams, {
      contentType: ndjson ? "application/x-ndjson" : "text/event-stream",
      // The engine ended the stream (its token was revoked): for the command, as if the client left.
      onCutOff: () => {
        clientGone = true;
        run?.resumeOutput();
        if (killOnDisconnect) run?.kill();
      },
      lastFrame: (why) => frame({ is_final: true, error: why.detail, code: why.code }),
    });
    res.flushHeaders();
    const write = (s: string) => {
      if (clientGone || res.writableEnded) return;
      // Respect the client's pace: a slow reader pauses the command's pipes instead of the
      // engine buffering its output in memory.
      if (!res.write(s) && run) {
        run.pauseOutput();
        res.once("drain", () => run?.resumeOutput());
      }
    };
    const chunk = (streamName: "stdout" | "stderr") => (c: Buffer) => {
      const text = c.toString("utf8");
      // Bytes that are not valid UTF-8 travel as base64 so nothing is mangled.
      if (Buffer.from(text, "utf8").equals(c)) write(frame({ stream: streamName, data: text }));
      else write(frame({ stream: streamName, data: c.toString("base64"), encoding: "base64" }));
    };
    let timer: NodeJS.Timeout | undefined;
    // The response is hijacked: whatever fails from here on (a spawn that throws included) ends it
    // with a final frame, never leaves it open.
    try {
      const running = (run = runExec(live.proc, command(body), {
        onStdout: chunk("stdout"),
        onStderr: chunk("stderr"),
      }));
      timer = setInterval(() => write(keepalive), ctx.config.keepaliveMs);
      res.on("close", () => {
        if (res.writableFinished) return;
        clientGone = true;
        // A client that left must not leave the command blocked on a paused pipe.
        running.resumeOutput();
        if (killOnDisconnect) running.kill();
      });
      const result = await running.done;
      events.record(row.id, "exec.stream", {
        command: body.command.slice(0, 1000),
        exit_code: result.exit_code,
        duration_ms: result.duration_ms,
        timed_out: result.timed_out,
        client_disconnected: clientGone,
      });
      write(
        frame({
          is_final: true,
          exit_code: result.exit_code,
          duration_ms: result.duration_ms,
          timed_out: result.timed_out,
        }),
      );
    } catch (e) {
      const err = ApiError.internal("Could not run the command in the sandbox", e, "sandbox_agent_unreachable");
      write(frame({ is_final: true, error: err.detail, code: err.code }));
    } finally {
      clearInterval(timer);
      if (!clientGone && !res.writableEnded) res.end();
    }
  }
};

/** What runExec runs for an exec body. */
function command(body: ExecBody) {
  return {
    command: body.command,
    cwd: body.cwd,
    env: body.env,
    stdin: body.stdin,
    timeoutMs: body.timeout_seconds * 1000,
  };
}

/**
 * The stream format an Accept header prefers (q-values, then order): "sse", "ndjson", or null when
 * it asks for neither (a plain JSON exec). SSE is the default for /exec/stream.
 */
export function streamFormat(accept: string | undefined): "sse" | "ndjson" | null {
  let best: { format: "sse" | "ndjson"; q: number } | null = null;
  for (const part of (accept ?? "").split(",")) {
    const [type, ...params] = part.trim().toLowerCase().split(";");
    const format = type === "text/event-stream" ? "sse" : type === "application/x-ndjson" ? "ndjson" : null;
    if (!format) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q) || q <= 0) continue;
    if (!best || q > best.q) best = { format, q };
  }
  return best?.format ?? null;
}
