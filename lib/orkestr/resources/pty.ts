import type { RequestOptions } from "../core";
import { path } from "../path";
import { APIResource } from "../resource";
import { PtySession, PtySignalResult, type OpenPtyBody } from "../schemas/pty";

export class Pty extends APIResource {
  // POST /v1/sandboxes/{id}/pty – start a terminal session (201)
  async open(sandboxId: string, body: OpenPtyBody = {}, options?: RequestOptions): Promise<PtySession> {
    return this.core.json({
      method: "POST",
      path: path`/sandboxes/${sandboxId}/pty`,
      body,
      schema: PtySession,
      options,
    });
  }

  // GET /v1/sandboxes/{id}/pty – its sessions (exited ones linger briefly)
  async list(sandboxId: string, options?: RequestOptions): Promise<PtySession[]> {
    return (
      await this.core.list({
        method: "GET",
        path: path`/sandboxes/${sandboxId}/pty`,
        item: PtySession,
        keys: ["sessions"],
        options,
      })
    ).items;
  }

  // GET /v1/sandboxes/{id}/pty/{pid}
  async get(sandboxId: string, sessionId: string, options?: RequestOptions): Promise<PtySession> {
    return this.core.json({
      method: "GET",
      path: path`/sandboxes/${sandboxId}/pty/${sessionId}`,
      schema: PtySession,
      options,
    });
  }

  // POST /v1/sandboxes/{id}/pty/{pid}/resize – {cols, rows}
  async resize(
    sandboxId: string,
    sessionId: string,
    size: { cols: number; rows: number },
    options?: RequestOptions,
  ): Promise<PtySession> {
    return this.core.json({
      method: "POST",
      path: path`/sandboxes/${sandboxId}/pty/${sessionId}/resize`,
      body: { cols: size.cols, rows: size.rows },
      idempotent: true,
      schema: PtySession,
      options,
    });
  }

  // POST /v1/sandboxes/{id}/pty/{pid}/signal – to the foreground process group (e.g. "SIGINT", "INT")
  async signal(
    sandboxId: string,
    sessionId: string,
    signal: string,
    options?: RequestOptions,
  ): Promise<PtySignalResult> {
    return this.core.json({
      method: "POST",
      path: path`/sandboxes/${sandboxId}/pty/${sessionId}/signal`,
      body: { signal },
      schema: PtySignalResult,
      options,
    });
  }

  // DELETE /v1/sandboxes/{id}/pty/{pid} – hang up and kill the session
  async close(sandboxId: string, sessionId: string, options?: RequestOptions): Promise<void> {
    return this.core.void({ method: "DELETE", path: path`/sandboxes/${sandboxId}/pty/${sessionId}`, options });
  }

  /**
   * The session's WebSocket URL (`ws:`/`wss:`). Binary frames are terminal bytes both ways, text
   * frames JSON control messages (PtyControlMessage). Browsers cannot send a Bearer header on a
   * WebSocket, so in the browser this points at Baton's own relay, which adds it server-side.
   */
  wsUrl(sandboxId: string, sessionId: string): string {
    const url = this.core.url(path`/sandboxes/${sandboxId}/pty/${sessionId}/ws`);
    if (/^https?:\/\//i.test(url)) return url.replace(/^http/i, "ws");
    const loc = (globalThis as { location?: { protocol: string; host: string } }).location;
    return loc ? `${loc.protocol === "https:" ? "wss:" : "ws:"}//${loc.host}${url}` : url;
  }
}
