import { z } from "zod";
import { accountOf } from "../auth.js";
import type { EngineEvent } from "../services/events.js";
import { ApiError } from "../errors.js";
import { Event } from "../responses.js";
import { SandboxIdParams } from "../schemas.js";
import type { ResourcePlugin } from "./plugin.js";
import { openStream, wantsFollow } from "./stream.js";

const EventsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().regex(/^\d+$/, "cursor is the opaque value of X-Next-Cursor").optional(),
  type: z.string().max(500).optional().describe("Comma list of event types"),
  follow: z
    .enum(["true", "false", "1", "0"])
    .optional()
    .describe("Follow live over SSE (also: Accept: text/event-stream); resume with ?cursor=<last id>"),
});

const wire = (e: EngineEvent) => ({ id: e.id, t: e.t, type: e.type, data: e.data });

/** The activity timeline (GET /v1/sandboxes/:id/events): oldest first, cursor-paged, or followed live over SSE. */
export const eventRoutes: ResourcePlugin = async (app, { ctx }) => {
  app.get(
    "/sandboxes/:id/events",
    {
      schema: {
        tags: ["events"],
        summary:
          "A sandbox's activity timeline, oldest first; or followed live over SSE (at most ORKESTR_ENGINE_STREAMS_PER_TOKEN " +
          "open streams per token and _PER_ACCOUNT per account, else 429 too_many_streams; a revoked or expired token's " +
          "stream ends with an `event: error` frame {detail, code})",
        params: SandboxIdParams,
        querystring: EventsQuery,
        response: { 200: z.array(Event) },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const q = req.query;
      const row = ctx.sandboxes.getRow(accountOf(req), id);
      const types = q.type
        ?.split(",")
        .map((t) => t.trim())
        .filter(Boolean);
      const after = q.cursor ? Number(q.cursor) : 0;
      if (!wantsFollow(req, q.follow)) {
        const page = ctx.events.list(row.id, { afterSeq: after, limit: q.limit, types });
        if (page.length === q.limit) reply.header("X-Next-Cursor", String(page[page.length - 1]!.seq));
        return page.map(wire);
      }
      if (!Number.isSafeInteger(after)) throw new ApiError("bad_request", "invalid cursor");
      const res = openStream(req, reply, ctx.streams);
      // A follower that stops reading is cut off once 1 MiB is queued; it resumes with ?cursor=<last id>.
      const send = (e: EngineEvent) => {
        if (res.writableEnded || res.destroyed) return;
        if (res.writableLength > 1024 * 1024) return void res.destroy();
        res.write(`id: ${e.seq}\ndata: ${JSON.stringify(wire(e))}\n\n`);
      };
      // Subscribe first, then replay the backlog, so nothing falls between the two.
      let lastSeq = after;
      const pending: EngineEvent[] = [];
      let replaying = true;
      const unsubscribe = ctx.events.subscribe((e) => {
        if (e.sandbox_id !== row.id || (types && !types.includes(e.type))) return;
        if (replaying) pending.push(e);
        else if (e.seq > lastSeq) {
          lastSeq = e.seq;
          send(e);
        }
      });
      for (;;) {
        const page = ctx.events.list(row.id, { afterSeq: lastSeq, limit: 500, types });
        for (const e of page) send(e);
        if (page.length) lastSeq = page[page.length - 1]!.seq;
        if (page.length < 500) break;
      }
      replaying = false;
      for (const e of pending)
        if (e.seq > lastSeq) {
          lastSeq = e.seq;
          send(e);
        }
      const keepalive = setInterval(() => {
        if (!res.writableEnded && !res.destroyed) res.write(": keepalive\n\n");
      }, ctx.config.keepaliveMs);
      res.on("close", () => {
        clearInterval(keepalive);
        unsubscribe();
      });
    },
  );
};
