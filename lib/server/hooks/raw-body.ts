import "server-only";
import { readBodyBytes as readCounted } from "../route";
import { ReceiverError } from "./errors";

/**
 * The delivery's body as the bytes that arrived (413 past `maxBytes`): the signature is over
 * exactly these bytes, where route()'s JSON reading decodes them (and drops a leading BOM).
 */
export function readBodyBytes(req: Request, maxBytes: number): Promise<Uint8Array> {
  return readCounted(
    req,
    maxBytes,
    () => new ReceiverError("payload_too_large", `A delivery is at most ${maxBytes / 1024} KiB.`),
  );
}
