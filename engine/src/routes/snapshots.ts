import { z } from "zod";
import { accountOf } from "../auth.js";
import { NoContent, Snapshot } from "../responses.js";
import { CreateSnapshotBody, ListQuery, ResourceIdParams, SandboxIdParams, SnapshotListQuery } from "../schemas.js";
import { sendPage, type ResourcePlugin } from "./plugin.js";

/** Named snapshots: capture a running sandbox, fork any number of children from it. */
export const snapshotRoutes: ResourcePlugin = async (app, { ctx }) => {
  const snapshots = ctx.storage.snapshots;
  const tags = ["snapshots"];

  app.post(
    "/sandboxes/:id/snapshots",
    {
      schema: {
        tags,
        summary: "Snapshot /workspace and /tmp under a name; the sandbox keeps running (Idempotency-Key honoured)",
        params: SandboxIdParams,
        body: CreateSnapshotBody,
        response: { 201: Snapshot },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      return ctx.idempotency.run(req, reply, `POST /v1/sandboxes/${id}/snapshots`, async () => ({
        status: 201,
        body: await snapshots.create(accountOf(req), id, req.body.name),
      }));
    },
  );

  app.get(
    "/sandboxes/:id/snapshots",
    {
      schema: {
        tags,
        summary: "The snapshots taken of one sandbox (as GET /v1/snapshots?sandbox_id=)",
        params: SandboxIdParams,
        querystring: ListQuery,
        response: { 200: z.array(Snapshot) },
      },
    },
    async (req, reply) => {
      const sandbox = ctx.sandboxes.getRow(accountOf(req), req.params.id);
      const { limit, cursor } = req.query;
      return sendPage(reply, snapshots.list(accountOf(req), { sandboxId: sandbox.id, limit, cursor }));
    },
  );

  app.get(
    "/snapshots",
    {
      schema: {
        tags,
        summary: "Named snapshots, newest first",
        querystring: SnapshotListQuery,
        response: { 200: z.array(Snapshot) },
      },
    },
    async (req, reply) => {
      const { sandbox_id: sandboxId, limit, cursor } = req.query;
      return sendPage(reply, snapshots.list(accountOf(req), { sandboxId, limit, cursor }));
    },
  );

  app.get(
    "/snapshots/:id",
    { schema: { tags, summary: "One snapshot, by id or name", params: ResourceIdParams, response: { 200: Snapshot } } },
    async (req) => snapshots.view(snapshots.get(accountOf(req), req.params.id)),
  );

  app.delete(
    "/snapshots/:id",
    {
      schema: {
        tags,
        summary: "Delete a snapshot's files; forks already made keep theirs",
        params: ResourceIdParams,
        response: { 204: NoContent },
      },
    },
    async (req, reply) => {
      await snapshots.remove(accountOf(req), req.params.id);
      return reply.status(204).send();
    },
  );
};
