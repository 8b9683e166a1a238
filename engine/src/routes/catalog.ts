import type { FastifyInstance } from "fastify";
import type { EngineContext } from "../context.js";

export function catalogRoutes(app: FastifyInstance, ctx: EngineContext): void {
  // GET /v1/base-images – the built-in images and what each maps to on this machine
  app.get("/base-images", async () =>
    [...ctx.host.images.values()].map((i) => ({
      id: i.id,
      description: i.description,
      maps_to: i.maps_to,
      available: i.available,
      gaps: i.gaps,
    })),
  );
}
