import type { FastifyInstance } from "fastify";
import { accountOf } from "../auth.js";
import type { EngineContext } from "../context.js";
import { parse } from "../lib/validate.js";
import {
  CreateVolumeBody,
  lifetimeHours,
  MoveVolumeBody,
  PatchVolumeBody,
  ResourceIdParams,
  VolumeListQuery,
} from "../schemas.js";

/** Persistent volumes (contract §3.9, seed 003): named disks mounted at /persist. */
export function volumeRoutes(app: FastifyInstance, ctx: EngineContext): void {
  const volumes = ctx.storage.volumes;

  // POST /v1/volumes – {name, size_gb?=10, region?, max_lifetime_hours | max_lifetime_days}
  app.post("/volumes", async (req, reply) => {
    const body = parse(CreateVolumeBody, req.body, "body");
    return ctx.idempotency.run(req, reply, "POST /v1/volumes", async () => ({
      status: 201,
      body: await volumes.create(accountOf(req), {
        name: body.name,
        size_gb: body.size_gb,
        region: body.region,
        lifetimeHours: lifetimeHours(body) ?? null,
      }),
    }));
  });

  // GET /v1/volumes?region=&status=&limit=&cursor= – size_mb is the space used
  app.get("/volumes", async (req, reply) => {
    const q = parse(VolumeListQuery, req.query, "query");
    const { items, next } = await volumes.list(accountOf(req), q);
    if (next) reply.header("X-Next-Cursor", next);
    return items;
  });

  // GET /v1/volumes/{id or name}
  app.get("/volumes/:id", async (req) =>
    volumes.view(volumes.get(accountOf(req), parse(ResourceIdParams, req.params, "path").id)),
  );

  // PATCH /v1/volumes/{id} – rename, grow (detached only), set or clear (null) the max lifetime
  app.patch("/volumes/:id", async (req) => {
    const { id } = parse(ResourceIdParams, req.params, "path");
    const body = parse(PatchVolumeBody, req.body, "body");
    return volumes.update(accountOf(req), id, {
      name: body.name,
      size_gb: body.size_gb,
      lifetimeHours: lifetimeHours(body),
    });
  });

  // DELETE /v1/volumes/{id} – 409 volume_in_use while a sandbox (running or paused) holds it
  app.delete("/volumes/:id", async (req, reply) => {
    await volumes.remove(accountOf(req), parse(ResourceIdParams, req.params, "path").id);
    return reply.status(204).send();
  });

  // POST /v1/volumes/{id}/move – {"region"}: detached only; 202 moving, then volume.moved
  app.post("/volumes/:id/move", async (req, reply) => {
    const { id } = parse(ResourceIdParams, req.params, "path");
    const { region } = parse(MoveVolumeBody, req.body, "body");
    return reply.status(202).send(await volumes.move(accountOf(req), id, region));
  });
}
