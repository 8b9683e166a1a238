import { apiStream } from "../api/stream";
import { path } from "../orkestr/path";
import { isTerminalFrame } from "../orkestr/stream";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { TemplateBuildError } from "../orkestr/schemas/templates";

// A template's build log, followed live. Apart from ./templates.ts so that the pages that only list
// templates (the sandbox list's filter, the create form's picker) never load the stream parser.

/** One line of a build log, as GET /v1/templates/{id}/logs sends it. */
export interface BuildLogLine {
  seq: number;
  step_index: number | null;
  stream: string;
  data: string;
}

/** The stream's last frame: the build's outcome. */
export interface BuildFinal {
  status: string | null;
  error: TemplateBuildError | string | null;
  size_mb: number | null;
}

export type BuildLogEvent = { type: "line"; line: BuildLogLine } | { type: "final"; final: BuildFinal };

function readLine(data: unknown): BuildLogLine | null {
  if (!data || typeof data !== "object" || Array.isArray(data)) return null;
  const o = data as Record<string, unknown>;
  if (typeof o.seq !== "number") return null;
  return {
    seq: o.seq,
    step_index: typeof o.step_index === "number" ? o.step_index : null,
    stream: typeof o.stream === "string" ? o.stream : "stdout",
    data: typeof o.data === "string" ? o.data : "",
  };
}

/**
 * A build's log followed live (SSE through Baton's proxy): every line from `cursor` (the first seq
 * wanted) on, then the final frame, after which the stream ends. A finished build replays its log
 * and ends at once, so one path serves both. Ends without a final frame when the connection drops:
 * the caller resumes from the line after the last one it saw.
 */
export async function* followBuildLog(
  id: string,
  { cursor, signal }: { cursor?: number; signal?: AbortSignal } = {},
): AsyncGenerator<BuildLogEvent, void, undefined> {
  const frames = apiStream({
    path: path`/api/v1/templates/${id}/logs`,
    query: { follow: "true", cursor: cursor && cursor > 1 ? String(cursor) : undefined },
    signal,
  });
  for await (const frame of frames) {
    if (isTerminalFrame(frame.data)) {
      const o = frame.data as Record<string, unknown>;
      yield {
        type: "final",
        final: {
          status: typeof o.status === "string" ? o.status : null,
          error: (o.error as BuildFinal["error"]) ?? null,
          size_mb: typeof o.size_mb === "number" ? o.size_mb : null,
        },
      };
      return;
    }
    const line = readLine(frame.data);
    if (line) yield { type: "line", line };
  }
}
