import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { accountOf } from "../auth.js";
import type { EngineContext } from "../context.js";
import { parse } from "../lib/validate.js";

const PreviewParams = z.object({
  id: z.string().min(1).max(64),
  port: z.coerce.number().int().min(1).max(65_535),
});
const SandboxParams = z.object({ id: z.string().min(1).max(64) });

/**
 * Preview URL routes of the API (contract §3.7). The proxy itself is not a route: preview hosts
 * are claimed by the HTTP server before Fastify (services/preview-proxy.ts).
 */
export function previewRoutes(app: FastifyInstance, ctx: EngineContext): void {
  // GET /v1/sandboxes/{id}/previews/{port} – {port, host, url, auth_required}
  app.get("/sandboxes/:id/previews/:port", async (req) => {
    const { id, port } = parse(PreviewParams, req.params, "path");
    return ctx.previews.describe(accountOf(req), id, port);
  });

  // POST /v1/sandboxes/{id}/preview-token – rotate preview_auth_token (returned once, stored hashed)
  app.post("/sandboxes/:id/preview-token", async (req) =>
    ctx.previews.rotateToken(accountOf(req), parse(SandboxParams, req.params, "path").id),
  );
}
