import { OrkestrError } from "../../../lib/orkestr/errors";
import { terminalApi } from "../../../lib/queries/terminal";
import { HEARTBEAT_PING } from "../../../lib/terminal-heartbeat";
import { missedOutput, TailBuffer } from "./replay";

// One interactive terminal's byte stream: the WebSocket to Baton's relay
// (/api/v1/sandboxes/{id}/pty/{pid}/ws, same origin: the session cookie authenticates it and the
// relay adds the orkestr token upstream). It reconnects after a drop, writing only what the screen
// missed (see replay.ts), and reports its state so the UI can block input while disconnected.

export type PtyState =
  | { status: "connecting" }
  | { status: "open" }
  | { status: "reconnecting"; attempt: number; detail: string }
  | { status: "exited"; exitCode: number | null; signal: string | null }
  | { status: "failed"; detail: string };

export interface PtyConnectionOptions {
  sandboxId: string;
  ptyId: string;
  onOutput(bytes: Uint8Array): void;
  onNotice(text: string): void;
  onState(state: PtyState): void;
  /** The current terminal size, sent after every (re)connect. */
  size(): { cols: number; rows: number };
}

const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000];
const encoder = new TextEncoder();
/**
 * Heartbeat: a socket whose network died without a FIN looks open for minutes, and keystrokes
 * sent into it are lost. Every HEARTBEAT_MS the page sends the relay's ping text (the relay
 * answers it, lib/server/pty-relay.ts); when nothing at all has arrived since the previous ping,
 * the socket is given up and reattached, scrollback intact. Judged from the last ping rather than
 * the wall clock, so a background tab whose timers the browser slows is not taken for dead.
 */
export const HEARTBEAT_MS = 10_000;

/** Why a session cannot be reattached (from the REST API), or null when it still runs or the server is unreachable. */
async function sessionGone(sandboxId: string, ptyId: string): Promise<string | null> {
  try {
    const session = await terminalApi.get(sandboxId, ptyId);
    return session.status === "exited"
      ? `The session has ended (exit code ${String(session.exit_code ?? "unknown")}).`
      : null;
  } catch (err) {
    // Offline (status 0) or a server error: keep trying. A 4xx says why it is gone.
    return err instanceof OrkestrError && err.status >= 400 && err.status < 500 ? err.detail : null;
  }
}

export class PtyConnection {
  private ws: WebSocket | null = null;
  private state: PtyState = { status: "connecting" };
  private readonly received = new TailBuffer();
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private awaitingReplay = false;
  private disposed = false;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private lastFrameAt = 0;
  private pingSentAt = 0;
  private readonly onOnline = () => {
    if (this.state.status === "reconnecting") this.reconnectNow();
  };
  /**
   * The browser says the network is gone: a socket may linger for minutes before TCP notices, and
   * keystrokes sent into it would be lost, so drop it now and reattach when the network is back.
   */
  private readonly onOffline = () => this.abandonSocket("You are offline.");

  /** Gives up an open socket without waiting for its close handshake (which may never come). */
  private abandonSocket(detail: string): void {
    const ws = this.ws;
    if (!ws || this.state.status !== "open") return;
    this.stopHeartbeat();
    this.ws = null;
    ws.close();
    void this.scheduleReconnect(detail, true);
  }

  private startHeartbeat(ws: WebSocket): void {
    this.stopHeartbeat();
    this.lastFrameAt = Date.now();
    this.pingSentAt = 0;
    this.heartbeat = setInterval(() => {
      if (this.ws !== ws || ws.readyState !== WebSocket.OPEN) return this.stopHeartbeat();
      if (this.pingSentAt > 0 && this.lastFrameAt < this.pingSentAt)
        return this.abandonSocket("The connection stopped answering.");
      this.pingSentAt = Date.now();
      ws.send(HEARTBEAT_PING);
    }, HEARTBEAT_MS);
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  constructor(private readonly opts: PtyConnectionOptions) {
    window.addEventListener("online", this.onOnline);
    window.addEventListener("offline", this.onOffline);
  }

  get status(): PtyState["status"] {
    return this.state.status;
  }

  connect(): void {
    if (this.disposed) return;
    const ws = new WebSocket(terminalApi.relayUrl(this.opts.sandboxId, this.opts.ptyId, location));
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.attempt = 0;
      // After a drop the engine replays its scrollback first: only the missed part is written.
      this.awaitingReplay = this.received.length > 0;
      this.setState({ status: "open" });
      const { cols, rows } = this.opts.size();
      ws.send(JSON.stringify({ type: "resize", cols, rows }));
      this.startHeartbeat(ws);
    };
    ws.onmessage = (ev: MessageEvent<ArrayBuffer | string>) => {
      this.lastFrameAt = Date.now();
      if (typeof ev.data === "string") return this.onControl(ev.data);
      const bytes = new Uint8Array(ev.data);
      if (this.awaitingReplay) {
        this.awaitingReplay = false;
        const missed = missedOutput(this.received.bytes(), bytes);
        if (missed === null) this.opts.onNotice("\r\n[some output was lost while disconnected]\r\n");
        const fresh = missed ?? bytes;
        this.received.push(fresh);
        this.opts.onOutput(fresh);
        return;
      }
      this.received.push(bytes);
      this.opts.onOutput(bytes);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.stopHeartbeat();
      if (this.disposed || this.state.status === "exited" || this.state.status === "failed") return;
      // 4xxx: the relay or the upstream refused for good (4404: session gone, 4409: connection token…).
      if (ev.code >= 4000 && ev.code < 5000 && ev.code !== 4502)
        return this.setState({ status: "failed", detail: ev.reason || `The terminal was closed (code ${ev.code}).` });
      if (ev.code === 1000 && opened)
        return this.setState({ status: "failed", detail: ev.reason || "The terminal session was closed." });
      void this.scheduleReconnect(ev.reason || (opened ? "The connection dropped." : "Could not connect."), opened);
    };
  }

  private onControl(text: string): void {
    let msg: { type?: unknown; exit_code?: unknown; signal?: unknown; message?: unknown };
    try {
      msg = JSON.parse(text) as typeof msg;
    } catch {
      return;
    }
    if (msg.type === "exit") {
      this.setState({
        status: "exited",
        exitCode: typeof msg.exit_code === "number" ? msg.exit_code : null,
        signal: typeof msg.signal === "string" ? msg.signal : null,
      });
    } else if (msg.type === "error" && typeof msg.message === "string") {
      this.opts.onNotice(`\r\n[terminal: ${msg.message}]\r\n`);
    }
  }

  private async scheduleReconnect(detail: string, wasOpen: boolean): Promise<void> {
    this.attempt++;
    this.setState({ status: "reconnecting", attempt: this.attempt, detail });
    // A refusal before the upgrade carries no reason a browser can read: ask the REST API why.
    if (!wasOpen && this.attempt > 1) {
      const gone = await sessionGone(this.opts.sandboxId, this.opts.ptyId);
      if (this.disposed || this.state.status !== "reconnecting") return;
      if (gone) return this.setState({ status: "failed", detail: gone });
    }
    if (!navigator.onLine) return; // the "online" event reconnects
    const delay = BACKOFF_MS[Math.min(this.attempt - 1, BACKOFF_MS.length - 1)]!;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, delay);
  }

  private reconnectNow(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (!this.ws) this.connect();
  }

  private setState(state: PtyState): void {
    this.state = state;
    this.opts.onState(state);
  }

  /** Keystrokes (UTF-8, binary frames). Dropped unless connected: the UI shows input is paused. */
  send(data: string): boolean {
    if (this.state.status !== "open" || this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(encoder.encode(data));
    return true;
  }

  resize(cols: number, rows: number): void {
    if (this.state.status === "open" && this.ws?.readyState === WebSocket.OPEN)
      this.ws.send(JSON.stringify({ type: "resize", cols, rows }));
  }

  /** Detaches (the session lives on in the engine until it is closed or idles out). */
  dispose(): void {
    this.disposed = true;
    window.removeEventListener("online", this.onOnline);
    window.removeEventListener("offline", this.onOffline);
    this.stopHeartbeat();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.ws?.close(1000, "closed");
    this.ws = null;
  }
}
