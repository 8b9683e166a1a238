import { CreateSnapshotBody } from "../../../../../../lib/orkestr/schemas/snapshots";
import { json, route } from "../../../../../../lib/server/route";
import { idempotencyFrom, withUpstream } from "../../../../../../lib/server/upstream";
import { SandboxIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/sandboxes/[id]/snapshots – a named, forkable snapshot ({name?}); the sandbox keeps running (201)
export const POST = route(
  { auth: "user", perm: "snapshots.write", params: SandboxIdParams, body: CreateSnapshotBody, optionalBody: true },
  async ({ req, team, params, body, audit }) => {
    const snapshot = await withUpstream(team, (orkestr) =>
      orkestr.snapshots.create(params.id, body, idempotencyFrom(req)),
    );
    await audit("snapshot.create", {
      target: snapshot.id,
      data: { sandbox_id: params.id, name: snapshot.name ?? null },
    });
    return json(snapshot, { status: 201 });
  },
);
