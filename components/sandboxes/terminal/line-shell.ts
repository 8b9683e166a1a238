import type { ExecStreamEvent } from "../../../lib/orkestr/stream";
import { terminalApi } from "../../../lib/queries/terminal";
import { CwdMarkerFilter, wrapCommand } from "./cwd-marker";

// Line mode: a terminal over streaming exec (POST /api/v1/sandboxes/{id}/exec/stream), for any v1
// server, PTY extension or not. The line is edited here (history with ↑/↓, ←/→, Ctrl-U, Ctrl-L);
// Enter runs it with `sh -c` in the remembered directory; stdout prints plain and stderr red;
// Ctrl-C aborts the request, and kill_on_disconnect tells the server to kill the command.
// No stdin and no full-screen programs: that is what the PTY mode is for.

export interface LineShellIO {
  write(text: string): void;
  clear(): void;
}

export type LineShellState = { status: "idle" } | { status: "running"; command: string };

const HOME = "/workspace";
/** A terminal command may run for a long time; the engine caps it at 24 h, the contract at the sandbox's lifetime. */
const COMMAND_TIMEOUT_S = 3600;
const MAX_HISTORY = 500;
const MAX_TYPEAHEAD = 64 * 1024;

const RED = "\x1b[31m";
// Bright black, not SGR 2 (dim): xterm draws dim at half opacity, below readable contrast.
const DIM = "\x1b[90m";
const BLUE = "\x1b[1;34m";
const RESET = "\x1b[0m";

function nonce(): string {
  const b = new Uint8Array(6);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** Line mode output has no pty to turn \n into \r\n. */
const crlf = (s: string) => s.replace(/\r?\n/g, "\r\n");

export class LineShell {
  private line = "";
  private cursor = 0;
  private history: string[] = [];
  /** Position while browsing history; history.length means "the line being typed". */
  private historyAt = 0;
  private draft = "";
  private cwd = HOME;
  private running: AbortController | null = null;
  /** Whether the last output ended a line (else the prompt starts on a fresh one). */
  private atLineStart = true;
  /** Keys typed while a command runs, replayed at the next prompt. */
  private typeahead = "";

  constructor(
    private readonly sandboxId: string,
    private readonly io: LineShellIO,
    private readonly onState: (state: LineShellState) => void = () => undefined,
  ) {}

  start(): void {
    this.io.write(
      `${DIM}Line mode: each line runs with sh -c through streaming exec. stdout is plain, ${RESET}${RED}stderr is red${RESET}${DIM}; Ctrl-C stops a command; cd is remembered.${RESET}\r\n`,
    );
    this.prompt();
  }

  get directory(): string {
    return this.cwd;
  }

  private promptText(): string {
    return `${BLUE}${this.cwd}${RESET} $ `;
  }

  private prompt(): void {
    if (!this.atLineStart) this.io.write("\r\n");
    this.atLineStart = true;
    this.line = "";
    this.cursor = 0;
    this.historyAt = this.history.length;
    this.io.write(this.promptText());
  }

  /** Redraws the prompt line with the cursor in place. */
  private redraw(): void {
    const back = this.line.length - this.cursor;
    this.io.write(`\r\x1b[K${this.promptText()}${this.line}${back > 0 ? `\x1b[${back}D` : ""}`);
  }

  private output(text: string, color?: string): void {
    if (!text) return;
    this.io.write(color ? `${color}${crlf(text)}${RESET}` : crlf(text));
    this.atLineStart = text.endsWith("\n");
  }

  /** Keystrokes and pastes from xterm's onData. */
  input(data: string): void {
    if (this.running) {
      // No stdin in line mode: what is typed meanwhile waits for the next prompt (typeahead), as in a shell.
      if (data.includes("\x03")) {
        this.typeahead = "";
        this.interrupt();
      } else if (this.typeahead.length + data.length <= MAX_TYPEAHEAD) {
        this.typeahead += data;
      }
      return;
    }
    let i = 0;
    while (i < data.length) {
      const rest = data.slice(i);
      // eslint-disable-next-line no-control-regex -- matching terminal escape sequences is the point
      const seq = /^\x1b(\[[0-9;]*[A-Za-z~]|O[A-Za-z])/.exec(rest);
      if (seq) {
        this.escape(seq[0]);
        i += seq[0].length;
        continue;
      }
      const ch = data[i]!;
      i++;
      if (ch === "\r" || ch === "\n") {
        if (ch === "\r" && data[i] === "\n") i++;
        this.io.write("\r\n");
        this.atLineStart = true;
        if (!this.line.trim()) {
          this.prompt();
          continue;
        }
        this.typeahead = data.slice(i) + this.typeahead;
        void this.run(this.line);
        return;
      }
      if (ch === "\x7f" || ch === "\b") {
        if (this.cursor > 0) {
          this.line = this.line.slice(0, this.cursor - 1) + this.line.slice(this.cursor);
          this.cursor--;
          this.redraw();
        }
      } else if (ch === "\x03") {
        this.io.write("^C\r\n");
        this.atLineStart = true;
        this.prompt();
      } else if (ch === "\x15") {
        this.line = this.line.slice(this.cursor);
        this.cursor = 0;
        this.redraw();
      } else if (ch === "\x0c") {
        this.io.clear();
        this.redraw();
      } else if (ch === "\x01") {
        this.cursor = 0;
        this.redraw();
      } else if (ch === "\x05") {
        this.cursor = this.line.length;
        this.redraw();
      } else if (ch >= " " || ch === "\t") {
        this.line = this.line.slice(0, this.cursor) + ch + this.line.slice(this.cursor);
        this.cursor++;
        if (this.cursor === this.line.length) this.io.write(ch);
        else this.redraw();
      }
    }
  }

  private escape(seq: string): void {
    const key = seq.at(-1);
    if (key === "A" || key === "B") {
      if (this.historyAt === this.history.length) this.draft = this.line;
      this.historyAt = Math.max(0, Math.min(this.history.length, this.historyAt + (key === "A" ? -1 : 1)));
      this.line = this.historyAt === this.history.length ? this.draft : this.history[this.historyAt]!;
      this.cursor = this.line.length;
      this.redraw();
    } else if (key === "C" && this.cursor < this.line.length) {
      this.cursor++;
      this.io.write(seq);
    } else if (key === "D" && this.cursor > 0) {
      this.cursor--;
      this.io.write(seq);
    } else if (key === "H") {
      this.cursor = 0;
      this.redraw();
    } else if (key === "F") {
      this.cursor = this.line.length;
      this.redraw();
    } else if (seq === "\x1b[3~" && this.cursor < this.line.length) {
      this.line = this.line.slice(0, this.cursor) + this.line.slice(this.cursor + 1);
      this.redraw();
    }
  }

  /** Ctrl-C while a command runs: abort the stream; the server kills the command (kill_on_disconnect). */
  interrupt(): void {
    if (!this.running) return;
    this.running.abort();
  }

  private async run(line: string): Promise<void> {
    const command = line.trim();
    if (this.history.at(-1) !== command) this.history.push(command);
    if (this.history.length > MAX_HISTORY) this.history.shift();
    const controller = new AbortController();
    this.running = controller;
    this.onState({ status: "running", command });
    const id = nonce();
    const filter = new CwdMarkerFilter(id);
    try {
      let end: ExecStreamEvent | null = null;
      const events = terminalApi.execStream(
        this.sandboxId,
        {
          command: wrapCommand(command, id),
          cwd: this.cwd,
          timeout_seconds: COMMAND_TIMEOUT_S,
          kill_on_disconnect: true,
        },
        controller.signal,
      );
      for await (const ev of events) {
        if (ev.type === "output") {
          if (ev.stream === "stdout") this.output(filter.push(ev.data));
          else this.output(ev.data, RED);
        } else if (ev.type === "exit" || ev.type === "error") end = ev;
      }
      this.output(filter.flush());
      if (controller.signal.aborted) {
        this.output("^C\n");
        return;
      }
      if (filter.cwd) this.cwd = filter.cwd;
      // execEvents never ends without one of the two: a missing final frame is an error event.
      if (end?.type === "error") this.output(`${end.error.detail}\n`, RED);
      else if (end?.type === "exit" && end.timed_out) this.output(`[stopped after ${COMMAND_TIMEOUT_S} s]\n`, DIM);
      else if (end?.type === "exit" && end.exit_code !== null && end.exit_code !== 0) {
        if (!this.atLineStart) this.output("\n");
        this.output(`[exit ${end.exit_code}]\n`, DIM);
      }
    } finally {
      this.running = null;
      this.onState({ status: "idle" });
      this.prompt();
      const pending = this.typeahead;
      this.typeahead = "";
      if (pending) this.input(pending);
    }
  }

  dispose(): void {
    this.running?.abort();
  }
}
