import type { Terminal } from "@xterm/xterm";

// Output arrives in many small pieces (WebSocket frames, SSE frames). Writing each one to xterm
// costs a parse pass and a render request apiece, so pieces are gathered and written once per
// animation frame; xterm then parses the batch in time slices without blocking input. A hidden tab
// gets no animation frames, so a timer takes over there.

export class WriteBatcher {
  private parts: Array<string | Uint8Array> = [];
  private scheduled = false;
  private disposed = false;

  constructor(private readonly term: Terminal) {}

  write(data: string | Uint8Array): void {
    if (this.disposed || data.length === 0) return;
    this.parts.push(data);
    if (this.scheduled) return;
    this.scheduled = true;
    if (typeof document !== "undefined" && document.hidden) setTimeout(() => this.flush(), 50);
    else requestAnimationFrame(() => this.flush());
  }

  /** Writes what is pending now; `done` runs once xterm has parsed it. */
  flush(done?: () => void): void {
    this.scheduled = false;
    if (this.disposed) return;
    const parts = this.parts;
    this.parts = [];
    if (parts.length === 0) {
      if (done) this.term.write("", done);
      return;
    }
    // Consecutive byte chunks are joined (a UTF-8 sequence split across frames is then whole).
    let bytes: Uint8Array[] = [];
    const emitBytes = () => {
      if (!bytes.length) return;
      const total = bytes.reduce((n, b) => n + b.length, 0);
      const joined = new Uint8Array(total);
      let at = 0;
      for (const b of bytes) {
        joined.set(b, at);
        at += b.length;
      }
      this.term.write(joined);
      bytes = [];
    };
    let text = "";
    for (const p of parts) {
      if (typeof p === "string") {
        emitBytes();
        text += p;
      } else {
        if (text) this.term.write(text);
        text = "";
        bytes.push(p);
      }
    }
    emitBytes();
    if (text) this.term.write(text);
    if (done) this.term.write("", done);
  }

  dispose(): void {
    this.disposed = true;
    this.parts = [];
  }
}
