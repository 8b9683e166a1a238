import { z } from "zod";
import { accountOf } from "../auth.js";
import { Preview, PreviewToken } from "../responses.js";
import type { ResourcePlugin } from "./plugin.js";

const PreviewParams = z.object({
  id: z.string().min(1).max(64),
  port: z.coerce.number().int().min(1).max(65_535),
});
const SandboxParams = z.object({ id: z.string().min(1).max(64) });

/**
 * Preview URL routes of the API (GET /v1/sandboxes/:id/previews/:port, POST …/preview-token). The
 * proxy itself is not a route: preview hosts are claimed by the HTTP server before Fastify
 * (services/preview-proxy.ts).
 */
export const previewRoutes: ResourcePlugin = async (app, { ctx }) => {
  const tags = ["previews"];
  app.get(
    "/sandboxes/:id/previews/:port",
    {
      schema: {
        tags,
        summary: "A port's preview URL: {port, host, url, auth_required, listening}",
        params: PreviewParams,
        response: { 200: Preview },
      },
    },
    async (req) => ctx.previews.describe(accountOf(req), req.params.id, req.params.port),
  );

  app.post(
    "/sandboxes/:id/preview-token",
    {
      schema: {
        tags,
        summary: "Rotate preview_auth_token (returned once, stored hashed)",
        params: SandboxParams,
        response: { 200: PreviewToken },
      },
    },
    async (req) => ctx.previews.rotateToken(accountOf(req), req.params.id),
  );
};
