import type { RequestOptions } from "../core";
import { paginate } from "../pagination";
import { path } from "../path";
import { APIResource } from "../resource";
import type { Page } from "../schemas/common";
import { Snapshot, type CreateSnapshotBody, type ListSnapshotsQuery } from "../schemas/snapshots";

export class Snapshots extends APIResource {
  // POST /v1/sandboxes/{id}/snapshots – a named, forkable snapshot; the sandbox keeps running
  async create(sandboxId: string, body: CreateSnapshotBody = {}, options?: RequestOptions): Promise<Snapshot> {
    return this.core.json({
      method: "POST",
      path: path`/sandboxes/${sandboxId}/snapshots`,
      body,
      idempotencyKey: true,
      schema: Snapshot,
      options,
    });
  }

  // GET /v1/snapshots?sandbox_id=&limit=&cursor=
  async list(query: ListSnapshotsQuery = {}, options?: RequestOptions): Promise<Page<Snapshot>> {
    return this.core.list({ method: "GET", path: "/snapshots", query, item: Snapshot, keys: ["snapshots"], options });
  }

  listAll(query: ListSnapshotsQuery = {}, options?: RequestOptions): AsyncGenerator<Snapshot, void, undefined> {
    return paginate((cursor) => this.list({ ...query, cursor }, options), query.cursor);
  }

  // GET /v1/snapshots/{id} (id or name)
  async get(id: string, options?: RequestOptions): Promise<Snapshot> {
    return this.core.json({ method: "GET", path: path`/snapshots/${id}`, schema: Snapshot, options });
  }

  // DELETE /v1/snapshots/{id}
  async delete(id: string, options?: RequestOptions): Promise<void> {
    return this.core.void({ method: "DELETE", path: path`/snapshots/${id}`, options });
  }
}
