import { queryOptions } from "@tanstack/react-query";
import { apiAll } from "../api/core";
import { object } from "../api/read";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { Snapshot } from "../orkestr/schemas/snapshots";

export const snapshotKeys = {
  all: ["snapshots"] as const,
  list: () => ["snapshots", "list"] as const,
};

const readSnapshot = object<Snapshot>({ id: "string" });

export const snapshotQueries = {
  /** Every snapshot (the create form's "start from a snapshot" picker). */
  list: () =>
    queryOptions({
      queryKey: snapshotKeys.list(),
      queryFn: ({ signal }) => apiAll({ path: "/api/v1/snapshots", signal }, readSnapshot),
    }),
};
