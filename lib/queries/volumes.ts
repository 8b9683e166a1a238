import { queryOptions } from "@tanstack/react-query";
import { apiAll } from "../api/core";
import { object } from "../api/read";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { Volume } from "../orkestr/schemas/volumes";

export const volumeKeys = {
  all: ["volumes"] as const,
  list: () => ["volumes", "list"] as const,
};

const readVolume = object<Volume>({ id: "string" });

export const volumeQueries = {
  /** Every volume (the create form's picker: a handful, a few pages at most). */
  list: () =>
    queryOptions({
      queryKey: volumeKeys.list(),
      queryFn: ({ signal }) => apiAll({ path: "/api/v1/volumes", signal }, readVolume),
    }),
};
