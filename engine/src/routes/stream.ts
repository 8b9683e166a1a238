import type { FastifyReply, FastifyRequest } from "fastify";
import type { ServerResponse } from "node:http";
import { ApiError } from "../errors.js";
import type { StreamCutOff, StreamLeases, StreamLease } from "../services/stream-leases.js";

/** `?follow=true|1`, or an Accept that asks for SSE: the events and build-log routes then stream. */
export function wantsFollow(req: FastifyRequest, follow: string | undefined): boolean {
  return follow === "true" || follow === "1" || String(req.headers.accept ?? "").includes("text/event-stream");
}

/** An SSE stream's last frame when the engine ends it: `event: error` with `{detail, code}`. */
export const sseCutOffFrame = (why: StreamCutOff) =>
  `event: error\ndata: ${JSON.stringify({ detail: why.detail, code: why.code })}\n\n`;

export interface StreamOptions {
  /** Default text/event-stream. */
  contentType?: string;
  /** The frame that tells the client why the engine ended the stream (default: sseCutOffFrame). */
  lastFrame?: (why: StreamCutOff) => string;
  /** Runs first when the engine ends the stream (a revoked token), e.g. to treat it as a disconnect. */
  onCutOff?: (why: StreamCutOff) => void;
}

/**
 * Takes the response over from Fastify for a stream of frames (SSE unless told otherwise): first a
 * slot among the token's and the account's open streams (429 too_many_streams past the caps,
 * answered as a normal error since nothing was sent yet), then the headers go out now, unbuffered by
 * proxies; the caller writes frames and ends it. The slot is given back when the response closes,
 * however it ends. When the token is revoked (or expires) the engine writes the last frame and ends
 * the response itself: callers check `res.writableEnded` before writing.
 */
export function openStream(
  req: FastifyRequest,
  reply: FastifyReply,
  leases: StreamLeases,
  opts: StreamOptions = {},
): ServerResponse {
  const lease = leaseFor(req, leases, (why) => {
    const r = reply.raw;
    if (r.writableEnded || r.destroyed) return;
    opts.onCutOff?.(why);
    if (!r.writableEnded && !r.destroyed) r.end((opts.lastFrame ?? sseCutOffFrame)(why));
  });
  reply.hijack();
  const res = reply.raw;
  res.once("close", () => lease.release());
  // A client that left while the route was still deciding (before this listener) closed it already.
  if (res.closed || res.destroyed) lease.release();
  res.writeHead(200, {
    "Content-Type": opts.contentType ?? "text/event-stream",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
    Connection: "keep-alive",
  });
  return res;
}

/** A stream slot for the request's token (which the auth hook set on every streaming route). */
export function leaseFor(req: FastifyRequest, leases: StreamLeases, cutOff: (why: StreamCutOff) => void): StreamLease {
  if (!req.token) throw new ApiError("unauthorized", "Not authenticated: send Authorization: Bearer ork_…");
  return leases.acquire(req.token, cutOff);
}
