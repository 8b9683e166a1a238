// The browser's reader for POST /api/v1/sandboxes/{id}/exec/stream (the contract's SSE or NDJSON frames):
// one tolerant parser for SSE and NDJSON. Blank lines and `:` keepalives are skipped, a `data:`
// prefix is stripped, each payload is JSON. (lib/orkestr/stream.ts does the same server-side but
// brings zod, which must stay out of the browser bundle.)

export type ExecFrame =
  | { kind: "output"; stream: "stdout" | "stderr"; text: string }
  | { kind: "final"; exitCode: number | null; timedOut: boolean; error: string | null };

const utf8 = new TextDecoder("utf-8");

function decodeData(data: string, encoding: unknown): string {
  if (encoding !== "base64") return data;
  try {
    const bin = atob(data);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return utf8.decode(bytes);
  } catch {
    return data;
  }
}

/** One wire frame as the contract (and other providers' spellings) have it, or null to skip. */
export function toExecFrame(value: unknown): ExecFrame | null {
  if (typeof value !== "object" || value === null) return null;
  const f = value as Record<string, unknown>;
  if ((f.stream === "stdout" || f.stream === "stderr") && typeof f.data === "string") {
    return { kind: "output", stream: f.stream, text: decodeData(f.data, f.encoding) };
  }
  if (typeof f.stdout === "string") return { kind: "output", stream: "stdout", text: f.stdout };
  if (typeof f.stderr === "string") return { kind: "output", stream: "stderr", text: f.stderr };
  if (
    f.is_final === true ||
    f.finished === true ||
    f.error !== undefined ||
    (f.exit_code !== undefined && f.stream === undefined)
  ) {
    const error =
      f.error === undefined || f.error === null
        ? null
        : typeof f.error === "string"
          ? f.error
          : JSON.stringify(f.error);
    return {
      kind: "final",
      exitCode: typeof f.exit_code === "number" ? f.exit_code : null,
      timedOut: f.timed_out === true,
      error,
    };
  }
  return null;
}

/** Payload lines of a stream chunk by chunk (a line may span chunks). */
export class FrameLineSplitter {
  private rest = "";
  private readonly decoder = new TextDecoder("utf-8");
  push(bytes: Uint8Array | null): string[] {
    this.rest += bytes ? this.decoder.decode(bytes, { stream: true }) : this.decoder.decode();
    const lines = this.rest.split(/\r\n|\r|\n/);
    this.rest = bytes ? lines.pop()! : "";
    const out: string[] = [];
    for (const raw of lines) {
      const line = raw.trim();
      if (!line || line.startsWith(":") || line.startsWith("event:") || line.startsWith("id:")) continue;
      out.push(line.startsWith("data:") ? line.slice(5).trimStart() : line);
    }
    return out;
  }
}

/** Reads an exec stream body to its end, calling `onFrame` for each frame; resolves with the final frame. */
export async function readExecStream(
  body: ReadableStream<Uint8Array>,
  onFrame: (frame: ExecFrame) => void,
): Promise<ExecFrame & { kind: "final" }> {
  const reader = body.getReader();
  const splitter = new FrameLineSplitter();
  let final: (ExecFrame & { kind: "final" }) | null = null;
  const take = (lines: string[]) => {
    for (const line of lines) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue; // not a frame
      }
      const frame = toExecFrame(parsed);
      if (!frame) continue;
      if (frame.kind === "final") final = frame;
      else onFrame(frame);
    }
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    take(splitter.push(value));
  }
  take(splitter.push(null));
  return (
    final ?? {
      kind: "final",
      exitCode: null,
      timedOut: false,
      error: "The output stream ended before the command finished.",
    }
  );
}
