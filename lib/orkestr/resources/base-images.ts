import type { RequestOptions } from "../core";
import { APIResource } from "../resource";
import { BaseImage } from "../schemas/templates";

export class BaseImages extends APIResource {
  // GET /v1/base-images – the built-in images (bare array or wrapped)
  async list(options?: RequestOptions): Promise<BaseImage[]> {
    return (
      await this.core.list({
        method: "GET",
        path: "/base-images",
        item: BaseImage,
        keys: ["base_images", "images"],
        options,
      })
    ).items;
  }
}
