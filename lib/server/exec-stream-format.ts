// Which framing an exec stream is answered in. The v1 contract: SSE by default, NDJSON when the
// client asks with `?format=ndjson` or with `Accept: application/x-ndjson` (what the orkestr SDK sends).

export type ExecStreamFormat = "sse" | "ndjson";

export function execStreamFormat(req: Request, explicit: ExecStreamFormat | null | undefined): ExecStreamFormat {
  if (explicit) return explicit;
  return /\bapplication\/x-ndjson\b/i.test(req.headers.get("accept") ?? "") ? "ndjson" : "sse";
}
