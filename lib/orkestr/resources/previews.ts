import type { RequestOptions } from "../core";
import { path } from "../path";
import { APIResource } from "../resource";
import { Preview, PreviewToken } from "../schemas/previews";
import type { Sandbox } from "../schemas/sandboxes";

export class Previews extends APIResource {
  // GET /v1/sandboxes/{id}/previews/{port} – host and URL of a port served in the sandbox
  async get(sandboxId: string, port: number, options?: RequestOptions): Promise<Preview> {
    return this.core.json({
      method: "GET",
      path: path`/sandboxes/${sandboxId}/previews/${port}`,
      schema: Preview,
      options,
    });
  }

  // POST /v1/sandboxes/{id}/preview-token – a new preview_auth_token (the old one stops working)
  async rotateToken(sandboxId: string, options?: RequestOptions): Promise<PreviewToken> {
    return this.core.json({
      method: "POST",
      path: path`/sandboxes/${sandboxId}/preview-token`,
      schema: PreviewToken,
      options,
    });
  }

  /** `<port>-<preview_host_base>` built client-side (seed 003), or null when the sandbox has no previews. */
  hostFor(sandbox: Pick<Sandbox, "preview_host_base">, port: number): string | null {
    if (!sandbox.preview_host_base || !Number.isInteger(port) || port < 1 || port > 65535) return null;
    return `${port}-${sandbox.preview_host_base}`;
  }
}
