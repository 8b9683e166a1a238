import { parseStream, type StreamFrame } from "../orkestr/stream";
import { apiSend, BASE, unreadable, type ApiRequest } from "./core";

/**
 * The frames of an SSE or NDJSON answer of Baton's API, read by lib/orkestr/stream.ts's parser (the
 * one the server reads orkestr's streams with). Apart from core.ts so that only the terminal loads it.
 */
export async function* apiStream(req: ApiRequest): AsyncGenerator<StreamFrame, void, undefined> {
  const response = await apiSend(req, "text/event-stream, application/x-ndjson");
  if (!response.body) throw unreadable(req, response.status, "the stream has no body", "");
  yield* parseStream(response.body, { signal: req.signal, source: BASE });
}
