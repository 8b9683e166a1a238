import { z } from "zod";
import { accountOf } from "../auth.js";
import { ApiError } from "../errors.js";
import { BuiltinTemplate, NoContent, Template, TemplateLogs } from "../responses.js";
import { EnvMap, noNul } from "../schemas.js";
import type { FinalFrame, LogLine } from "../services/templates.js";
import { sendPage, type ResourcePlugin } from "./plugin.js";
import { openStream, wantsFollow } from "./stream.js";

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

/** Custom templates and their build logs. Templates are immutable: no PATCH or PUT. */
export const templateRoutes: ResourcePlugin = async (app, { ctx }) => {
  const { templates } = ctx;
  const tags = ["templates"];

  app.post(
    "/templates",
    {
      schema: {
        tags,
        summary: "Queue a build: 202 with status queued or building (Idempotency-Key honoured)",
        body: CreateTemplateBody,
        response: { 202: Template },
      },
    },
    async (req, reply) =>
      ctx.idempotency.run(req, reply, "POST /v1/templates", async () => ({
        status: 202,
        body: templates.create(accountOf(req), req.body),
      })),
  );

  app.get(
    "/templates",
    {
      schema: {
        tags,
        summary: "Templates, newest first; ?include_builtin=true puts the base images first",
        querystring: ListTemplatesQuery,
        response: { 200: z.array(z.union([Template, BuiltinTemplate])) },
      },
    },
    async (req, reply) => {
      const q = req.query;
      return sendPage(
        reply,
        templates.list(accountOf(req), {
          includeBuiltin: q.include_builtin === "true" || q.include_builtin === "1",
          limit: q.limit,
          cursor: q.cursor,
        }),
      );
    },
  );

  app.get(
    "/templates/:id",
    {
      schema: { tags, summary: "One template, by id or name", params: TemplateIdParams, response: { 200: Template } },
    },
    async (req) => templates.get(accountOf(req), req.params.id),
  );

  app.delete(
    "/templates/:id",
    {
      schema: {
        tags,
        summary: "Delete a template; sandboxes already using it keep running",
        params: TemplateIdParams,
        response: { 204: NoContent },
      },
    },
    async (req, reply) => {
      await templates.delete(accountOf(req), req.params.id);
      return reply.status(204).send();
    },
  );

  const immutable = async () => {
    throw new ApiError(
      "method_not_allowed",
      "Templates are immutable: to change one, build a new template",
      {},
      { Allow: "GET, DELETE" },
    );
  };
  // 405 for any id, before any lookup: nothing to document.
  app.patch("/templates/:id", { schema: { hide: true } }, immutable);
  app.put("/templates/:id", { schema: { hide: true } }, immutable);

  app.get(
    "/templates/:id/logs",
    {
      schema: {
        tags,
        summary:
          "A build's log lines from ?cursor=<first seq>; or followed live over SSE (?follow=true or Accept: " +
          "text/event-stream), ending with a final {is_final: true, status, error, size_mb} frame (at most " +
          "ORKESTR_ENGINE_STREAMS_PER_TOKEN open streams per token and _PER_ACCOUNT per account, else 429 " +
          "too_many_streams; a revoked or expired token's stream ends with an `event: error` frame {detail, code})",
        params: TemplateIdParams,
        querystring: LogsQuery,
        response: { 200: TemplateLogs },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const q = req.query;
      const follow = wantsFollow(req, q.follow);
      // An SSE client reconnecting sends the last id it saw; it resumes after that line.
      const lastEventId = Number(req.headers["last-event-id"]);
      const cursor = q.cursor ?? (Number.isSafeInteger(lastEventId) && lastEventId > 0 ? lastEventId + 1 : 1);
      if (!follow) return templates.logs(accountOf(req), id, cursor, q.limit);

      templates.find(accountOf(req), id); // 404 before the stream starts
      let closed = false;
      const res = openStream(req, reply, ctx.streams, { onCutOff: () => void (closed = true) });
      // A follower that stops reading is cut off once 1 MiB is queued; it resumes with Last-Event-ID.
      const write = (chunk: string) => {
        if (closed || res.writableEnded || res.destroyed) return;
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
    },
  );
};
