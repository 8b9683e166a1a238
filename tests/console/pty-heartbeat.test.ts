import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HEARTBEAT_MS, PtyConnection, type PtyState } from "../../components/sandboxes/terminal/pty-connection";

// The terminal's heartbeat, with a stand-in WebSocket and fake timers: a socket that stops
// delivering anything is given up and reattached; a slow but answering one is kept.

class FakeSocket {
  static OPEN = 1;
  static all: FakeSocket[] = [];
  readyState = 0;
  binaryType = "blob";
  sent: string[] = [];
  closed = false;
  onopen: (() => void) | null = null;
  onmessage: ((ev: { data: ArrayBuffer | string }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  open() {
    this.readyState = FakeSocket.OPEN;
    this.onopen?.();
  }
  send(data: string | Uint8Array) {
    this.sent.push(typeof data === "string" ? data : `bytes:${data.length}`);
  }
  close() {
    this.closed = true; // a dead network: no close event ever arrives
  }
  receive(data: string) {
    this.onmessage?.({ data });
  }
}

describe("the terminal heartbeat", () => {
  let states: PtyState["status"][];
  let conn: PtyConnection;

  beforeEach(() => {
    vi.useFakeTimers();
    FakeSocket.all = [];
    vi.stubGlobal("WebSocket", FakeSocket);
    vi.stubGlobal("window", {
      addEventListener: () => undefined,
      removeEventListener: () => undefined,
      location: { search: "?team=acme" },
    });
    vi.stubGlobal("location", { protocol: "http:", host: "baton.test" });
    vi.stubGlobal("navigator", { onLine: true });
    states = [];
    conn = new PtyConnection({
      sandboxId: "sbx_1",
      ptyId: "pty_1",
      onOutput: () => undefined,
      onNotice: () => undefined,
      onState: (s) => states.push(s.status),
      size: () => ({ cols: 80, rows: 24 }),
    });
    conn.connect();
    FakeSocket.all[0]!.open();
  });

  afterEach(() => {
    conn.dispose();
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it("pings while open and keeps a socket that answers", () => {
    const ws = FakeSocket.all[0]!;
    for (let i = 0; i < 5; i++) {
      vi.advanceTimersByTime(HEARTBEAT_MS);
      ws.receive('{"type":"pong"}');
    }
    expect(ws.sent.filter((m) => m === '{"type":"ping"}')).toHaveLength(5);
    expect(ws.closed).toBe(false);
    expect(conn.status).toBe("open");
  });

  it("gives up a socket that stopped answering, blocks input and reconnects", () => {
    const ws = FakeSocket.all[0]!;
    vi.advanceTimersByTime(HEARTBEAT_MS); // ping, no answer
    expect(conn.status).toBe("open");
    vi.advanceTimersByTime(HEARTBEAT_MS); // still nothing: dead
    expect(ws.closed).toBe(true);
    expect(conn.status).toBe("reconnecting");
    expect(conn.send("ls\r")).toBe(false);
    vi.advanceTimersByTime(1_000);
    expect(FakeSocket.all).toHaveLength(2);
    FakeSocket.all[1]!.open();
    expect(states.slice(-2)).toEqual(["reconnecting", "open"]);
    expect(conn.send("ls\r")).toBe(true);
  });

  it("counts any frame from the relay as a sign of life", () => {
    const ws = FakeSocket.all[0]!;
    for (let i = 0; i < 4; i++) {
      vi.advanceTimersByTime(HEARTBEAT_MS);
      ws.receive('{"type":"error","message":"not a pong, but an answer"}');
    }
    expect(conn.status).toBe("open");
  });
});
