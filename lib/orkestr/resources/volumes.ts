import type { RequestOptions } from "../core";
import { paginate } from "../pagination";
import { path } from "../path";
import { APIResource } from "../resource";
import type { Page } from "../schemas/common";
import { Volume, type CreateVolumeBody, type ListVolumesQuery, type UpdateVolumeBody } from "../schemas/volumes";

export class Volumes extends APIResource {
  // POST /v1/volumes
  async create(body: CreateVolumeBody, options?: RequestOptions): Promise<Volume> {
    return this.core.json({ method: "POST", path: "/volumes", body, idempotencyKey: true, schema: Volume, options });
  }

  // GET /v1/volumes?region=&status=
  async list(query: ListVolumesQuery = {}, options?: RequestOptions): Promise<Page<Volume>> {
    return this.core.list({ method: "GET", path: "/volumes", query, item: Volume, keys: ["volumes"], options });
  }

  listAll(query: ListVolumesQuery = {}, options?: RequestOptions): AsyncGenerator<Volume, void, undefined> {
    return paginate((cursor) => this.list({ ...query, cursor }, options), query.cursor);
  }

  // GET /v1/volumes/{id} (id or name)
  async get(id: string, options?: RequestOptions): Promise<Volume> {
    return this.core.json({ method: "GET", path: path`/volumes/${id}`, schema: Volume, options });
  }

  // PATCH /v1/volumes/{id} – rename, grow, change max lifetime
  async update(id: string, body: UpdateVolumeBody, options?: RequestOptions): Promise<Volume> {
    return this.core.json({ method: "PATCH", path: path`/volumes/${id}`, body, schema: Volume, options });
  }

  // POST /v1/volumes/{id}/move – relocate a detached volume (202, status "moving")
  async move(id: string, region: string, options?: RequestOptions): Promise<Volume> {
    return this.core.json({
      method: "POST",
      path: path`/volumes/${id}/move`,
      body: { region },
      schema: Volume,
      options,
    });
  }

  // DELETE /v1/volumes/{id} – 409 volume_in_use while attached
  async delete(id: string, options?: RequestOptions): Promise<void> {
    return this.core.void({ method: "DELETE", path: path`/volumes/${id}`, options });
  }
}
