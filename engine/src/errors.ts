import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { randomBytes } from "node:crypto";
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { ZodError } from "zod";

/** Every error code the engine emits, with its HTTP status (the contract's `{detail, code}` errors, field `code`). */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_path: 400,
  region_unavailable: 400,
  // Seed 003: a region other than the volume's is "a clear 400" (the contract's [P] table said 409).
  volume_region_mismatch: 400,
  unauthorized: 401,
  preview_auth_required: 401,
  trial_exhausted: 402,
  insufficient_scope: 403,
  plan_limit: 403,
  template_cap_reached: 403,
  size_not_allowed: 403,
  network_not_allowed: 403,
  payment_verification_required: 403,
  invalid_signature: 403,
  forbidden: 403,
  not_found: 404,
  sandbox_not_found: 404,
  template_not_found: 404,
  base_image_not_found: 404,
  file_not_found: 404,
  snapshot_not_found: 404,
  volume_not_found: 404,
  webhook_not_found: 404,
  session_not_found: 404,
  delivery_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  sandbox_not_running: 409,
  sandbox_paused: 409,
  network_off: 409,
  preview_auth_disabled: 409,
  sandbox_not_paused: 409,
  template_not_ready: 409,
  template_name_taken: 409,
  directory_not_empty: 409,
  is_a_directory: 409,
  not_a_directory: 409,
  snapshot_cap_reached: 409,
  snapshot_name_taken: 409,
  volume_in_use: 409,
  volume_name_taken: 409,
  cannot_shrink: 409,
  snapshot_region_mismatch: 409,
  // A test or a redelivery to a disabled webhook: it would be cancelled at once (disabled means no sends).
  webhook_disabled: 409,
  // A replay whose stored secret cannot be unsealed (the engine's idempotency key file was replaced).
  idempotent_replay_unavailable: 409,
  sandbox_terminated: 410,
  url_expired: 410,
  payload_too_large: 413,
  // A path segment past the router's 100 characters (no id is that long).
  uri_too_long: 414,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  // Misdirected Request: a Host that is not one of the engine's names (DNS rebinding defence).
  host_not_allowed: 421,
  validation_error: 422,
  rate_limited: 429,
  concurrency_limit: 429,
  // Open streams (SSE, NDJSON, terminal WebSockets) past the per-token or per-account cap.
  too_many_streams: 429,
  headers_too_large: 431,
  internal_error: 500,
  not_implemented: 501,
  sandbox_agent_unreachable: 502,
  port_not_listening: 502,
  preview_upstream_error: 502,
  fault_injected: 503,
  fleet_full: 503,
  upstream_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string | unknown[],
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === "string" ? detail : code);
    this.status = ERROR_STATUS[code];
  }

  /**
   * An error whose cause is inside the engine (a failed mount, a helper's stderr, a host path): the
   * client gets `detail` and a short reference, the engine log gets the reference and the cause.
   * Internal messages never go into a response.
   */
  static internal(detail: string, cause: unknown, code: ErrorCode = "internal_error"): ApiError {
    const ref = randomBytes(4).toString("hex");
    console.error(`[engine] ref ${ref}: ${detail}: ${(cause as Error)?.stack ?? String(cause)}`);
    return new ApiError(code, `${detail} (ref ${ref}); see the engine log`, { ref });
  }
}

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  if (err.status === 401) reply.header("WWW-Authenticate", "Bearer");
  return reply.status(err.status).send({ detail: err.detail, code: err.code, ...err.extra });
}

function drain(stream: NodeJS.ReadableStream, cap: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const done = () => resolve();
    stream.on("data", (c: Buffer) => {
      seen += c.length;
      if (seen > cap) done();
    });
    stream.once("end", done);
    stream.once("error", done);
    stream.resume();
  });
}

/** FastAPI-style validation detail: [{loc, msg, type}]. */
export function zodDetail(
  err: ZodError,
  where: "body" | "query" | "path" | "header",
): { loc: (string | number)[]; msg: string; type: string }[] {
  return err.issues.map((i) => ({
    loc: [where, ...i.path.map((p) => (typeof p === "symbol" ? String(p) : p))],
    msg: i.message,
    type: i.code,
  }));
}

/** One error handler for the whole app: known errors keep their code, bad input is 4xx, internals never leak. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError | ZodError, request, reply) => {
    if (error instanceof ApiError) return sendError(reply, error);
    if (error instanceof ZodError) return sendError(reply, new ApiError("validation_error", zodDetail(error, "body")));
    const fe = error as FastifyError;
    if (fe.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      // Read the rest of the body first (bounded) so the client, still uploading, gets the 413
      // instead of a reset connection.
      return drain(request.raw, 256 * 1024 * 1024).then(() =>
        sendError(
          reply,
          new ApiError(
            "payload_too_large",
            "Request body is larger than this route accepts. Use files/presign-upload or files/raw for large files.",
          ),
        ),
      );
    }
    if (fe.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
      return sendError(
        reply,
        new ApiError(
          "unsupported_media_type",
          `Unsupported Content-Type "${request.headers["content-type"] ?? ""}"; send application/json.`,
        ),
      );
    }
    if (
      fe.code === "FST_ERR_CTP_EMPTY_JSON_BODY" ||
      fe.code === "FST_ERR_CTP_INVALID_JSON_BODY" ||
      (fe.statusCode === 400 && error instanceof SyntaxError)
    ) {
      return sendError(reply, new ApiError("bad_request", `Malformed JSON body: ${fe.message}`));
    }
    if (typeof fe.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500) {
      return sendError(reply, new ApiError("bad_request", fe.message));
    }
    const ref = randomBytes(4).toString("hex");
    request.log.error({ err: error, ref }, "unhandled error");
    return reply
      .status(500)
      .send({ detail: `Internal engine error (ref ${ref}); see the engine log.`, code: "internal_error", ref });
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new ApiError("not_found", `No route ${request.method} ${request.url.split("?")[0]}`)),
  );
}

/**
 * Fastify's `frameworkErrors`: the router's own refusals, which no hook or error handler sees. A
 * path segment over the router's limit (414) and a path that is not valid percent-encoding (400)
 * are the client's; anything else (an async constraint failing) is ours.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === "FST_ERR_MAX_PARAM_LENGTH") {
    void sendError(
      reply,
      new ApiError("uri_too_long", "A path segment is longer than 100 characters; no id is that long"),
    );
    return;
  }
  if (error.code === "FST_ERR_BAD_URL") {
    void sendError(reply, new ApiError("bad_request", "The URL path is not valid percent-encoded UTF-8"));
    return;
  }
  const ref = randomBytes(4).toString("hex");
  request.log.error({ err: error, ref }, "router error");
  void reply
    .status(500)
    .send({ detail: `Internal engine error (ref ${ref}); see the engine log.`, code: "internal_error", ref });
}

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refused (bad request line or
 * header, oversized headers, headers too slow to arrive) is answered in the contract's shape
 * before the connection closes. Nothing is written into a response already under way.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  // As Node's own handler: answer unless a response on this connection has begun to go out.
  const inFlight = (socket as Duplex & { _httpMessage?: { _headerSent?: boolean } | null })._httpMessage;
  if (!socket.writable || inFlight?._headerSent) return void socket.destroy();
  const e =
    err.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? new ApiError("request_timeout", "The request did not arrive in time")
      : err.code === "HPE_HEADER_OVERFLOW"
        ? new ApiError("headers_too_large", "The request's headers are too large")
        : new ApiError("bad_request", `Malformed HTTP request${err.code?.startsWith("HPE_") ? ` (${err.code})` : ""}`);
  const body = JSON.stringify({ detail: e.detail, code: e.code });
  socket.end(
    `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
