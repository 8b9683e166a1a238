import type { RequestOptions } from "../core";
import { OrkestrError } from "../errors";
import { path } from "../path";
import { APIResource } from "../resource";
import { execEvents, parseStream, type ExecStreamEvent } from "../stream";
import { ExecResult, type ExecBody } from "../schemas/exec";

export interface ExecStreamOptions extends RequestOptions {
  /** Wire format to ask for; both are parsed either way. Default SSE. */
  format?: "sse" | "ndjson";
}

// One type each: the local engine picks NDJSON whenever the Accept header mentions it, q-values
// notwithstanding. The parser reads either format whatever the server sends.
const ACCEPT = { sse: "text/event-stream", ndjson: "application/x-ndjson" };
/** Slack on top of the command's own timeout before the client gives up on a plain exec. */
const EXEC_SLACK_MS = 15_000;
const DEFAULT_EXEC_TIMEOUT_S = 60;

export class Exec extends APIResource {
  // POST /v1/sandboxes/{id}/exec – run to completion; a non-zero exit is a result, not an error
  async run(id: string, command: string | ExecBody, options?: RequestOptions): Promise<ExecResult> {
    const body = execBody(command);
    return this.core.json({
      method: "POST",
      path: path`/sandboxes/${id}/exec`,
      body,
      schema: ExecResult,
      options: this.withExecTimeout(body, options),
    });
  }

  /**
   * POST /v1/sandboxes/{id}/exec/stream – output chunks then one final `exit` (or `error`) event.
   * Errors before the stream starts (404/409/410) are thrown as OrkestrError.
   */
  stream(
    id: string,
    command: string | ExecBody,
    options: ExecStreamOptions = {},
  ): AsyncGenerator<ExecStreamEvent, void, undefined> {
    return this.streamEvents(id, command, options);
  }

  /**
   * The upstream streaming Response, body unread, for unbuffered proxying. Falls back to
   * `POST /exec {"stream": true}` where `/exec/stream` does not exist (the real route is unknown).
   */
  async raw(id: string, command: string | ExecBody, options: ExecStreamOptions = {}): Promise<Response> {
    const body = execBody(command);
    const headers = { Accept: ACCEPT[options.format ?? "sse"] };
    try {
      return await this.core.response({
        method: "POST",
        path: path`/sandboxes/${id}/exec/stream`,
        body,
        headers,
        options,
      });
    } catch (e) {
      if (!(e instanceof OrkestrError) || ![404, 405].includes(e.status) || e.code === "sandbox_not_found") throw e;
      return this.core.response({
        method: "POST",
        path: path`/sandboxes/${id}/exec`,
        body: { ...body, stream: true },
        headers,
        options,
      });
    }
  }

  private async *streamEvents(
    id: string,
    command: string | ExecBody,
    options: ExecStreamOptions,
  ): AsyncGenerator<ExecStreamEvent, void, undefined> {
    const response = await this.raw(id, command, options);
    if (!response.body)
      throw this.core.parseError(
        { method: "POST", path: path`/sandboxes/${id}/exec/stream` },
        response,
        "the exec stream has no body",
        "",
      );
    const source = this.core.baseUrl;
    yield* execEvents(parseStream(response.body, { signal: options.signal, source }), {
      source,
      signal: options.signal,
    });
  }

  /** A plain exec may legitimately run for its whole timeout_seconds: wait that long plus slack. */
  private withExecTimeout(body: ExecBody, options: RequestOptions | undefined): RequestOptions {
    const commandMs = (body.timeout_seconds ?? DEFAULT_EXEC_TIMEOUT_S) * 1000 + EXEC_SLACK_MS;
    return { ...options, timeoutMs: options?.timeoutMs ?? Math.max(this.core.timeoutMs, commandMs) };
  }
}

function execBody(command: string | ExecBody): ExecBody {
  return typeof command === "string" ? { command } : command;
}
