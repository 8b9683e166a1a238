import { queryOptions } from "@tanstack/react-query";
import { apiJson, apiVoid, withPageTeam } from "../api/core";
import { apiStream } from "../api/stream";
import { arrayOf, object } from "../api/read";
import { path } from "../orkestr/path";
import { execEvents, type ExecStreamEvent } from "../orkestr/stream";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { ExecBody } from "../orkestr/schemas/exec";
import type { Limits } from "../orkestr/schemas/limits";
import type { PtySession } from "../orkestr/schemas/pty";

// The terminal's calls: interactive sessions (the engine's PTY extension) and, where a server has
// none, line mode's exec stream, read with the same parser the server uses (lib/orkestr/stream.ts).

export const terminalKeys = {
  sessions: (sandboxId: string) => ["sandboxes", "pty", sandboxId] as const,
};

/** Whether the upstream advertises the engine's PTY extension (limits.capabilities.pty). */
export function hasPty(limits: Limits | undefined): boolean {
  const pty = limits?.capabilities?.pty;
  return pty !== undefined && pty !== null && pty !== false;
}

const readSession = object<PtySession>({ id: "string", status: "string" });
const sessionsPath = (sandboxId: string) => path`/api/v1/sandboxes/${sandboxId}/pty`;
const sessionPath = (sandboxId: string, ptyId: string) => path`/api/v1/sandboxes/${sandboxId}/pty/${ptyId}`;

export const terminalQueries = {
  sessions: (sandboxId: string) =>
    queryOptions({
      queryKey: terminalKeys.sessions(sandboxId),
      queryFn: ({ signal }) => apiJson({ path: sessionsPath(sandboxId), signal }, arrayOf(readSession)),
    }),
};

export const terminalApi = {
  /** One session (the reconnect loop asks whether it still runs). */
  get: (sandboxId: string, ptyId: string, signal?: AbortSignal) =>
    apiJson({ path: sessionPath(sandboxId, ptyId), signal }, readSession),
  open: (sandboxId: string, size: { cols: number; rows: number }) =>
    apiJson({ method: "POST", path: sessionsPath(sandboxId), body: { cols: size.cols, rows: size.rows } }, readSession),
  close: (sandboxId: string, ptyId: string) => apiVoid({ method: "DELETE", path: sessionPath(sandboxId, ptyId) }),
  /** The relay's WebSocket URL (same origin: the session cookie authenticates it). */
  relayUrl: (sandboxId: string, ptyId: string, location: { protocol: string; host: string }) =>
    `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${withPageTeam(`${sessionPath(sandboxId, ptyId)}/ws`)}`,
  /**
   * POST /api/v1/sandboxes/{id}/exec/stream as exec events (output, then exit or error). Never throws:
   * a refusal before the stream starts and trouble inside it both arrive as a final `{type:"error"}`.
   */
  execStream: (sandboxId: string, body: ExecBody, signal: AbortSignal): AsyncGenerator<ExecStreamEvent> =>
    execEvents(apiStream({ method: "POST", path: path`/api/v1/sandboxes/${sandboxId}/exec/stream`, body, signal }), {
      source: "the Baton server",
      signal,
    }),
};
