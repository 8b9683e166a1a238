import type { BuildFinal, BuildLogLine } from "../../../lib/queries/template-log";
import { newAnsiConverter, visibleLine } from "./ansi";

// A build log as the page shows it: the engine's own lines, then one section per step (its header
// line gives the command, its exit line the code and duration), each output line rendered once to
// escaped HTML as it arrives. The engine writes a step's header and exit as `system` lines with the
// step's index ("step 2/3: <command>", "step 2 exited with code 1 in 40 ms (why)"); a server that
// does not still gets its lines grouped by `step_index`. The final frame's error is the authority on
// which step failed, with what code, and the tail of its output.

export interface LogEntry {
  seq: number;
  stream: string;
  /** Escaped HTML (./ansi.ts): safe to insert. */
  html: string;
}

export interface StepExit {
  code: number;
  durationMs: number | null;
  /** Why the engine stopped it (a timeout, the size cap), when it did. */
  reason: string | null;
}

export interface StepSection {
  kind: "step";
  index: number;
  command: string | null;
  entries: LogEntry[];
  exit: StepExit | null;
}

export interface EngineSection {
  kind: "engine";
  entries: LogEntry[];
}

export type Section = StepSection | EngineSection;

export interface BuildFailure {
  stepIndex: number | null;
  step: string | null;
  exitCode: number | null;
  /** The failing step's output tail, as escaped HTML. */
  tailHtml: string;
}

const HEADER = /^step (\d+)\/(\d+): ([\s\S]*?)\r?\n?$/;
const EXIT = /^step (\d+) exited with code (-?\d+)(?: in (\d+) ms)?(?: \(([\s\S]*)\))?\r?\n?$/;

export class BuildLogModel {
  sections: Section[] = [];
  /** The last seq taken in: a reconnect resumes after it. */
  lastSeq = 0;
  final: BuildFinal | null = null;
  lines = 0;
  private steps = new Map<number, StepSection>();
  private converters = new Map<string, (text: string) => string>();

  private convert(key: string, text: string): string {
    let c = this.converters.get(key);
    if (!c) this.converters.set(key, (c = newAnsiConverter()));
    return c(text);
  }

  private step(index: number): StepSection {
    let s = this.steps.get(index);
    if (!s) {
      s = { kind: "step", index, command: null, entries: [], exit: null };
      this.steps.set(index, s);
      this.sections.push(s);
    }
    return s;
  }

  /** Takes in one line; a line seen before (a replay after a reconnect) is ignored. */
  push(line: BuildLogLine): void {
    if (line.seq <= this.lastSeq) return;
    this.lastSeq = line.seq;
    this.lines++;
    if (line.step_index === null) {
      const last = this.sections[this.sections.length - 1];
      const section: EngineSection =
        last?.kind === "engine"
          ? last
          : (this.sections.push({ kind: "engine", entries: [] }), this.sections.at(-1) as EngineSection);
      section.entries.push(this.entry(line, "engine"));
      return;
    }
    const step = this.step(line.step_index);
    if (line.stream === "system") {
      const header = HEADER.exec(line.data);
      if (header && Number(header[1]) === line.step_index + 1) {
        step.command = header[3]!;
        return;
      }
      const exit = EXIT.exec(line.data);
      if (exit && Number(exit[1]) === line.step_index + 1) {
        step.exit = {
          code: Number(exit[2]),
          durationMs: exit[3] === undefined ? null : Number(exit[3]),
          reason: exit[4] ?? null,
        };
        return;
      }
    }
    step.entries.push(this.entry(line, `${line.step_index}`));
  }

  private entry(line: BuildLogLine, scope: string): LogEntry {
    return {
      seq: line.seq,
      stream: line.stream,
      html: this.convert(`${scope}:${line.stream}`, visibleLine(line.data)),
    };
  }

  finish(final: BuildFinal): void {
    this.final = final;
  }

  /** Why the build failed, from the final frame; null while it runs or when it succeeded. */
  failure(): BuildFailure | null {
    if (this.final?.status !== "failed") return null;
    const e = this.final.error;
    if (!e || typeof e === "string")
      return { stepIndex: null, step: null, exitCode: null, tailHtml: this.tail(e ?? "") };
    const stepIndex = typeof e.step_index === "number" ? e.step_index : null;
    return {
      stepIndex,
      step: e.step ?? (stepIndex === null ? null : (this.steps.get(stepIndex)?.command ?? null)),
      exitCode:
        typeof e.exit_code === "number"
          ? e.exit_code
          : stepIndex === null
            ? null
            : (this.steps.get(stepIndex)?.exit?.code ?? null),
      tailHtml: this.tail(e.output ?? ""),
    };
  }

  private tail(text: string): string {
    const convert = newAnsiConverter();
    return text
      .replace(/\n+$/, "")
      .split("\n")
      .map((l) => convert(visibleLine(l)))
      .join("\n");
  }

  /** How a step stands: a failing step is the final frame's, a running one is the last step without an exit. */
  stepState(index: number): "ok" | "failed" | "running" | "stopped" | "not-run" {
    const s = this.steps.get(index);
    const failing = this.failure()?.stepIndex;
    if (failing === index) return "failed";
    if (!s) return "not-run";
    if (s.exit) return s.exit.code === 0 && !s.exit.reason ? "ok" : "failed";
    return this.final ? "stopped" : "running";
  }
}
