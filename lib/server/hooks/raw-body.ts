import "server-only";
import { ReceiverError } from "./errors";

/**
 * The request body as the bytes that arrived, given up (413) the moment it passes `maxBytes`.
 * route()'s readBodyText() decodes to a string (and drops a leading BOM, as `text()` does): fine for
 * JSON input, wrong for a signature, which is over exactly these bytes.
 */
export async function readBodyBytes(req: Request, maxBytes: number): Promise<Uint8Array> {
  const tooLarge = () => new ReceiverError("payload_too_large", `A delivery is at most ${maxBytes / 1024} KiB.`);
  const declared = Number(req.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  if (!req.body) return new Uint8Array();
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        // Stop reading: the rest is never taken off the socket into memory.
        void reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks);
}
