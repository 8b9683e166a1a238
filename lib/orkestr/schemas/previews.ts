import { z } from "zod";
import { Num } from "./common";

/** GET /v1/sandboxes/{id}/previews/{port}: `port`, `host`, `url`, `auth_required`. */
export const Preview = z
  .object({
    port: Num.nullish(),
    host: z.string().nullish(),
    url: z.string().nullish(),
    auth_required: z.boolean().nullish(),
  })
  .loose();
export type Preview = z.infer<typeof Preview>;

/** POST /v1/sandboxes/{id}/preview-token. */
export const PreviewToken = z.object({ preview_auth_token: z.string() }).loose();
export type PreviewToken = z.infer<typeof PreviewToken>;
