import { z } from "zod";
import { accountOf } from "../auth.js";
import { NoContent, Volume } from "../responses.js";
import {
  CreateVolumeBody,
  lifetimeHours,
  MoveVolumeBody,
  PatchVolumeBody,
  ResourceIdParams,
  VolumeListQuery,
} from "../schemas.js";
import { sendPage, type ResourcePlugin } from "./plugin.js";

/** Persistent volumes (seed 003): named disks mounted at /persist. */
export const volumeRoutes: ResourcePlugin = async (app, { ctx }) => {
  const volumes = ctx.storage.volumes;
  const tags = ["volumes"];

  app.post(
    "/volumes",
    {
      schema: {
        tags,
        summary: "Create a volume (Idempotency-Key honoured)",
        body: CreateVolumeBody,
        response: { 201: Volume },
      },
    },
    async (req, reply) => {
      const body = req.body;
      return ctx.idempotency.run(req, reply, "POST /v1/volumes", async () => ({
        status: 201,
        body: await volumes.create(accountOf(req), {
          name: body.name,
          size_gb: body.size_gb,
          region: body.region,
          lifetimeHours: lifetimeHours(body) ?? null,
        }),
      }));
    },
  );

  app.get(
    "/volumes",
    {
      schema: {
        tags,
        summary: "Volumes, newest first; size_mb is the space used",
        querystring: VolumeListQuery,
        response: { 200: z.array(Volume) },
      },
    },
    async (req, reply) => sendPage(reply, await volumes.list(accountOf(req), req.query)),
  );

  app.get(
    "/volumes/:id",
    { schema: { tags, summary: "One volume, by id or name", params: ResourceIdParams, response: { 200: Volume } } },
    async (req) => volumes.view(volumes.get(accountOf(req), req.params.id)),
  );

  app.patch(
    "/volumes/:id",
    {
      schema: {
        tags,
        summary: "Rename, grow (detached only), set or clear (null) the max lifetime",
        params: ResourceIdParams,
        body: PatchVolumeBody,
        response: { 200: Volume },
      },
    },
    async (req) =>
      volumes.update(accountOf(req), req.params.id, {
        name: req.body.name,
        size_gb: req.body.size_gb,
        lifetimeHours: lifetimeHours(req.body),
      }),
  );

  app.delete(
    "/volumes/:id",
    {
      schema: {
        tags,
        summary: "Delete a volume: 409 volume_in_use while a sandbox (running or paused) holds it",
        params: ResourceIdParams,
        response: { 204: NoContent },
      },
    },
    async (req, reply) => {
      await volumes.remove(accountOf(req), req.params.id);
      return reply.status(204).send();
    },
  );

  app.post(
    "/volumes/:id/move",
    {
      schema: {
        tags,
        summary: "Move a detached volume to another region: 202 moving, then the volume.moved event",
        params: ResourceIdParams,
        body: MoveVolumeBody,
        response: { 202: Volume },
      },
    },
    async (req, reply) => reply.status(202).send(await volumes.move(accountOf(req), req.params.id, req.body.region)),
  );
};
