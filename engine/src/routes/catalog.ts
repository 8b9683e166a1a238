import { z } from "zod";
import { BaseImage } from "../responses.js";
import type { ResourcePlugin } from "./plugin.js";

export const catalogRoutes: ResourcePlugin = async (app, { ctx }) => {
  app.get(
    "/base-images",
    {
      schema: {
        tags: ["templates"],
        summary: "The built-in images and what each maps to on this machine",
        response: { 200: z.array(BaseImage) },
      },
    },
    async () =>
      [...ctx.host.images.values()].map((i) => ({
        id: i.id,
        description: i.description,
        maps_to: i.maps_to,
        available: i.available,
        gaps: i.gaps,
      })),
  );
};
