// An exec's output as an agent gets it over MCP: each stream cut at the caller's byte limit, on a
// UTF-8 character boundary, with a marker that says how much was left out (an agent that sees no
// marker has the whole output).

export const DEFAULT_OUTPUT_BYTES = 16 * 1024;
/** The most a caller may ask for per stream: the upstream caps each stream at 1 MiB. */
export const MAX_OUTPUT_BYTES = 1024 * 1024;

export interface CutText {
  text: string;
  /** Bytes of the original beyond what `text` holds (0 when nothing was cut). */
  cutBytes: number;
}

export function cutUtf8(text: string, maxBytes: number): CutText {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return { text, cutBytes: 0 };
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) so a character is never split.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString("utf8"), cutBytes: bytes.length - end };
}

/** "" when nothing was cut; else a line saying what was left out, and by whom. */
export function cutMarker(stream: "stdout" | "stderr", cut: CutText, upstreamTruncated: boolean): string {
  if (cut.cutBytes === 0 && !upstreamTruncated) return "";
  const parts: string[] = [];
  if (cut.cutBytes > 0) parts.push(`${cut.cutBytes} more bytes of ${stream} not shown (max_output_bytes)`);
  if (upstreamTruncated) parts.push(`the sandbox had already cut ${stream} at 1 MiB`);
  return `\n[output cut: ${parts.join("; ")}]`;
}
