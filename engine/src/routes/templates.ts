import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { accountOf } from "../auth.js";
import type { EngineContext } from "../context.js";
import { ApiError } from "../errors.js";
import { parse } from "../lib/validate.js";
import { EnvMap, noNul } from "../schemas.js";
import type { FinalFrame, LogLine } from "../services/templates.js";

const CreateTemplateBody = z.object({
  name: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
      "name is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
    ),
  base_image: z.string().min(1).max(64),
  steps: z
    .array(
      z
        .string()
        .min(1, "a step is a non-empty shell command")
        .max(64 * 1024)
        .refine(noNul, "a step must not contain a NUL byte"),
    )
    .max(100)
    .default([]),
  env: EnvMap.default({}),
});

const TemplateIdParams = z.object({ id: z.string().min(1).max(128) });

const ListTemplatesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(64).optional(),
  include_builtin: z.enum(["true", "false", "1", "0"]).optional(),
});

const LogsQuery = z.object({
  cursor: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(500),
  follow: z.enum(["true", "false", "1", "0"]).optional(),
});

/** Custom templates, their build logs (contract §3.10). Templates are immutable: no PATCH or PUT. */
export function templateRoutes(app: FastifyInstance, ctx: EngineContext): void {
  const { templates } = ctx;

  // POST /v1/templates – queue a build; 202 with status queued or building (Idempotency-Key honoured)
  app.post("/templates", async (req, reply) => {
    const body = parse(CreateTemplateBody, req.body, "body");
    return ctx.idempotency.run(req, reply, "POST /v1/templates", async () => ({
      status: 202,
      body: templates.create(accountOf(req), body),
    }));
  });

  // GET /v1/templates – newest first; ?include_builtin=true adds the base images; ?limit=&cursor=
  app.get("/templates", async (req, reply) => {
    const q = parse(ListTemplatesQuery, req.query, "query");
    const { items, next } = templates.list(accountOf(req), {
      includeBuiltin: q.include_builtin === "true" || q.include_builtin === "1",
      limit: q.limit,
      cursor: q.cursor,
    });
    if (next) reply.header("X-Next-Cursor", next);
    return items;
  });

  // GET /v1/templates/{id or name}
  app.get("/templates/:id", async (req) =>
    templates.get(accountOf(req), parse(TemplateIdParams, req.params, "path").id),
  );

  // DELETE /v1/templates/{id or name} – 204; sandboxes already using it keep running
  app.delete("/templates/:id", async (req, reply) => {
    await templates.delete(accountOf(req), parse(TemplateIdParams, req.params, "path").id);
    return reply.status(204).send();
  });

  const immutable = async () => {
    throw new ApiError(
      "method_not_allowed",
      "Templates are immutable: to change one, build a new template",
      {},
      { Allow: "GET, DELETE" },
    );
  };
  app.patch("/templates/:id", immutable);
  app.put("/templates/:id", immutable);

  // GET /v1/templates/{id}/logs – ?cursor=<first seq>&limit=, or ?follow=true / Accept: text/event-stream (SSE)
  app.get("/templates/:id/logs", async (req, reply) => {
    const { id } = parse(TemplateIdParams, req.params, "path");
    const q = parse(LogsQuery, req.query, "query");
    const follow =
      q.follow === "true" || q.follow === "1" || String(req.headers.accept ?? "").includes("text/event-stream");
    // An SSE client reconnecting sends the last id it saw; it resumes after that line.
    const lastEventId = Number(req.headers["last-event-id"]);
    const cursor = q.cursor ?? (Number.isSafeInteger(lastEventId) && lastEventId > 0 ? lastEventId + 1 : 1);
    if (!follow) return templates.logs(accountOf(req), id, cursor, q.limit);

    templates.find(accountOf(req), id); // 404 before the stream starts
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache",
      "X-Accel-Buffering": "no",
      Connection: "keep-alive",
    });
    let closed = false;
    // A follower that stops reading is cut off once 1 MiB is queued; it resumes with Last-Event-ID.
    const write = (chunk: string) => {
      if (closed) return;
      if (res.writableLength > 1024 * 1024) return void res.destroy();
      res.write(chunk);
    };
    const keepalive = setInterval(() => write(": keepalive\n\n"), ctx.config.keepaliveMs);
    // Assigned below; a build that already finished calls end() from inside follow().
    let unsubscribe: () => void = () => undefined;
    const end = () => {
      if (closed) return;
      closed = true;
      clearInterval(keepalive);
      unsubscribe();
      res.end();
    };
    unsubscribe = templates.follow(
      accountOf(req),
      id,
      cursor,
      (line: LogLine) => write(`id: ${line.seq}\ndata: ${JSON.stringify(line)}\n\n`),
      (final: FinalFrame) => {
        write(`data: ${JSON.stringify(final)}\n\n`);
        end();
      },
    );
    res.on("close", () => {
      closed = true;
      clearInterval(keepalive);
      unsubscribe();
    });
  });
}
