import type { FastifyInstance } from "fastify";
import { accountOf } from "../auth.js";
import type { EngineContext } from "../context.js";
import { parse } from "../lib/validate.js";
import { CreateSnapshotBody, ListQuery, ResourceIdParams, SandboxIdParams, SnapshotListQuery } from "../schemas.js";

/** Named snapshots (contract §3.8): capture a running sandbox, fork any number of children from it. */
export function snapshotRoutes(app: FastifyInstance, ctx: EngineContext): void {
  const snapshots = ctx.storage.snapshots;

  // POST /v1/sandboxes/{id}/snapshots – {"name"}: copy /workspace and /tmp; the sandbox keeps running
  app.post("/sandboxes/:id/snapshots", async (req, reply) => {
    const { id } = parse(SandboxIdParams, req.params, "path");
    const { name } = parse(CreateSnapshotBody, req.body, "body");
    return ctx.idempotency.run(req, reply, `POST /v1/sandboxes/${id}/snapshots`, async () => ({
      status: 201,
      body: await snapshots.create(accountOf(req), id, name),
    }));
  });

  // GET /v1/sandboxes/{id}/snapshots – the snapshots taken of one sandbox (same as ?sandbox_id=)
  app.get("/sandboxes/:id/snapshots", async (req, reply) => {
    const { id } = parse(SandboxIdParams, req.params, "path");
    const sandbox = ctx.sandboxes.getRow(accountOf(req), id);
    const { limit, cursor } = parse(ListQuery, req.query, "query");
    const { items, next } = snapshots.list(accountOf(req), { sandboxId: sandbox.id, limit, cursor });
    if (next) reply.header("X-Next-Cursor", next);
    return items;
  });

  // GET /v1/snapshots?sandbox_id=&limit=&cursor= – newest first
  app.get("/snapshots", async (req, reply) => {
    const q = parse(SnapshotListQuery, req.query, "query");
    const { items, next } = snapshots.list(accountOf(req), {
      sandboxId: q.sandbox_id,
      limit: q.limit,
      cursor: q.cursor,
    });
    if (next) reply.header("X-Next-Cursor", next);
    return items;
  });

  // GET /v1/snapshots/{id or name}
  app.get("/snapshots/:id", async (req) =>
    snapshots.view(snapshots.get(accountOf(req), parse(ResourceIdParams, req.params, "path").id)),
  );

  // DELETE /v1/snapshots/{id or name} – removes its files; forks already made keep theirs
  app.delete("/snapshots/:id", async (req, reply) => {
    await snapshots.remove(accountOf(req), parse(ResourceIdParams, req.params, "path").id);
    return reply.status(204).send();
  });
}
