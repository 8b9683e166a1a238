/**
 * Baton's one typed orkestr client. Isomorphic: no Node-only APIs and
 * no secrets, so the browser can use it against Baton's own `/api` with cookie auth.
 */
export {
  createOrkestrClient,
  OrkestrClient,
  OrkestrCore,
  normalizeBaseUrl,
  retryDecision,
  summarizeIssues,
} from "./core";
export type { CoreRequest, FetchLike, Method, OrkestrClientOptions, RequestOptions } from "./core";
export { path, buildQuery } from "./path";
export type { Query, QueryValue } from "./path";
export { paginate, extractList } from "./pagination";
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
} from "./errors";
export type { OrkestrErrorInit } from "./errors";
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
} from "./stream";
export type { StreamFrame, ParseStreamOptions, ExecStreamEvent, ExecStreamName } from "./stream";
export { encodeBase64, decodeBase64, utf8Encode, utf8Decode } from "./base64";
export { APIResource } from "./resource";
export { Sandboxes } from "./resources/sandboxes";
export { Exec } from "./resources/exec";
export type { ExecStreamOptions } from "./resources/exec";
export { Files } from "./resources/files";
export type { FileData, FileBody, FileOrDirectory } from "./resources/files";
export { Snapshots } from "./resources/snapshots";
export { Volumes } from "./resources/volumes";
export { Templates } from "./resources/templates";
export type { TemplateLogEvent } from "./resources/templates";
export { BaseImages } from "./resources/base-images";
export { Webhooks } from "./resources/webhooks";
export { Previews } from "./resources/previews";
export { Pty } from "./resources/pty";
export * from "./schemas/index";
