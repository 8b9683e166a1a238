import { queryOptions } from "@tanstack/react-query";
import { apiJson } from "../api/core";
import { object } from "../api/read";
import { path } from "../orkestr/path";
import type { CapAction, CapWindow } from "../usage/caps";
import type { CapsView } from "../usage/caps-view";

// Spend caps in the browser: the team's caps with how close each is (GET /api/usage/caps), setting
// and removing them (PUT, DELETE), and where alerts go (GET/PATCH /api/usage/alerts). Mutations
// answer the new view; callers invalidate ["caps"].

export interface AlertSettingsView {
  webhook_url: string | null;
  webhook_secret_set: boolean;
  email: boolean;
  /** Baton has SMTP (BATON_SMTP_URL): otherwise email alerts cannot go out. */
  email_configured: boolean;
  /** Only in the answer to the change that made it: shown once. */
  webhook_secret?: string | null;
}

export const capsKeys = {
  all: ["caps"] as const,
  list: () => ["caps", "list"] as const,
  alerts: () => ["caps", "alerts"] as const,
};

const readCaps = object<CapsView>({ caps: "array", scope: "string", can_manage: "boolean", raisers: "string" });
const readAlerts = object<AlertSettingsView>({ email: "boolean", webhook_secret_set: "boolean" });

export const capsQueries = {
  list: () =>
    queryOptions({
      queryKey: capsKeys.list(),
      queryFn: ({ signal }) => apiJson({ path: "/api/usage/caps", signal }, readCaps),
      // The caps job recomputes at most once a minute: a poll of the same pace.
      refetchInterval: 60_000,
    }),
  alerts: () =>
    queryOptions({
      queryKey: capsKeys.alerts(),
      queryFn: ({ signal }) => apiJson({ path: "/api/usage/alerts", signal }, readAlerts),
    }),
};

export const capsMutations = {
  set: (body: { user_id: string | null; window: CapWindow; limit_micro: number; action: CapAction }) =>
    apiJson({ method: "PUT", path: "/api/usage/caps", body }, readCaps),
  remove: (id: string) => apiJson({ method: "DELETE", path: path`/api/usage/caps/${id}` }, readCaps),
  alerts: (body: { webhook_url?: string | null; email?: boolean; rotate_secret?: true }) =>
    apiJson({ method: "PATCH", path: "/api/usage/alerts", body }, readAlerts),
};
