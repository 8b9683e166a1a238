import { apiFetch } from "../../../lib/queries/api";
import type { Limits } from "../../../lib/orkestr/schemas/limits";
import type { PtySession } from "../../../lib/orkestr/schemas/pty";

// The terminal's calls to Baton's /api/v1 (types only from the schemas: zod stays server-side).

const enc = encodeURIComponent;

export const terminalKeys = {
  sessions: (sandboxId: string) => ["sandboxes", "pty", sandboxId] as const,
};

/** Whether the upstream advertises the engine's PTY extension (limits.capabilities.pty). */
export function hasPty(limits: Limits | undefined): boolean {
  const pty = limits?.capabilities?.pty;
  return pty !== undefined && pty !== null && pty !== false;
}

export const terminalApi = {
  list: (sandboxId: string, signal?: AbortSignal) =>
    apiFetch<PtySession[]>(`/api/v1/sandboxes/${enc(sandboxId)}/pty`, { signal }),
  open: (sandboxId: string, size: { cols: number; rows: number }) =>
    apiFetch<PtySession>(`/api/v1/sandboxes/${enc(sandboxId)}/pty`, {
      method: "POST",
      body: { cols: size.cols, rows: size.rows },
    }),
  close: (sandboxId: string, ptyId: string) =>
    apiFetch<void>(`/api/v1/sandboxes/${enc(sandboxId)}/pty/${enc(ptyId)}`, { method: "DELETE" }),
};
