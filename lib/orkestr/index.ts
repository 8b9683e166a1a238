/**
 * Baton's one typed orkestr client (architecture convention 3). Isomorphic: no Node-only APIs and
 * no secrets, so the browser can use it against Baton's own `/api` with cookie auth.
 */
export {
  createOrkestrClient,
  OrkestrClient,
  OrkestrCore,
  normalizeBaseUrl,
  retryDecision,
  summarizeIssues,
} from "./core.js";
export type { CoreRequest, FetchLike, Method, OrkestrClientOptions, RequestOptions } from "./core.js";
export { path, buildQuery } from "./path.js";
export type { Query, QueryValue } from "./path.js";
export { paginate, extractList } from "./pagination.js";
export {
  OrkestrError,
  OrkestrConnectionError,
  OrkestrTimeoutError,
  OrkestrAbortError,
  OrkestrParseError,
  codeForStatus,
  parseRetryAfter,
  readableDetail,
  errorFromResponse,
  errorText,
  asOrkestrError,
} from "./errors.js";
export type { OrkestrErrorInit } from "./errors.js";
export {
  parseStream,
  readLines,
  isTerminalFrame,
  untilTerminal,
  execEvents,
  streamError,
  passthrough,
  passthroughHeaders,
  encodeSse,
  encodeNdjson,
  framesToSse,
  STREAM_RESPONSE_HEADERS,
} from "./stream.js";
export type { StreamFrame, ParseStreamOptions, ExecStreamEvent, ExecStreamName } from "./stream.js";
export { encodeBase64, decodeBase64, utf8Encode, utf8Decode } from "./base64.js";
export { APIResource } from "./resource.js";
export { Sandboxes } from "./resources/sandboxes.js";
export { Exec } from "./resources/exec.js";
export type { ExecStreamOptions } from "./resources/exec.js";
export { Files } from "./resources/files.js";
export type { FileData, FileBody, FileOrDirectory } from "./resources/files.js";
export { Snapshots } from "./resources/snapshots.js";
export { Volumes } from "./resources/volumes.js";
export { Templates } from "./resources/templates.js";
export type { TemplateLogEvent } from "./resources/templates.js";
export { BaseImages } from "./resources/base-images.js";
export { Webhooks } from "./resources/webhooks.js";
export { Previews } from "./resources/previews.js";
export { Pty } from "./resources/pty.js";
export * from "./schemas/index.js";
