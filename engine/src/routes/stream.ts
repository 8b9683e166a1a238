import type { FastifyReply, FastifyRequest } from "fastify";
import type { ServerResponse } from "node:http";

/** `?follow=true|1`, or an Accept that asks for SSE: the events and build-log routes then stream. */
export function wantsFollow(req: FastifyRequest, follow: string | undefined): boolean {
  return follow === "true" || follow === "1" || String(req.headers.accept ?? "").includes("text/event-stream");
}

/**
 * Takes the response over from Fastify for a stream of frames (SSE unless told otherwise): the
 * headers go out now, unbuffered by proxies; the caller writes frames and ends it.
 */
export function openStream(reply: FastifyReply, contentType = "text/event-stream"): ServerResponse {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    "Content-Type": contentType,
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
    Connection: "keep-alive",
  });
  return res;
}
