import { queryOptions } from "@tanstack/react-query";
import { apiAll, apiJson, apiVoid } from "../api/core";
import { path } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { Sandbox } from "../orkestr/schemas/sandboxes";
import type { CreateTemplateBody, Template } from "../orkestr/schemas/templates";
import { readSandbox } from "./sandboxes";
import { readTemplate, templateKeys } from "./templates";

// The templates pages' own reads and changes (one template, who uses it, create, delete), apart from
// ./templates.ts because the bundler keeps a module whole: the pages that only list templates (the
// sandbox list's filter, the create form's picker) must not carry these. Keys are ./templates.ts's.

/** While a build is queued or running its template is re-read this often (the log streams in between). */
export const BUILDING_POLL_MS = 3_000;

export const isBuilding = (t: Pick<Template, "status"> | undefined): boolean =>
  t?.status === "queued" || t?.status === "building";

/** Sandboxes that are, or may again be, using a template's layer (finished ones hold nothing). */
const LIVE_STATUSES = "creating,running,pausing,paused,resuming";

/**
 * The templates pages' own questions, apart from `templateQueries` so that the pages that only list
 * templates (the sandbox list's filter, the create form's picker) do not carry them.
 */
export const templatePageQueries = {
  /** One template by id (or name); re-read while it builds, so status and size follow the build. */
  detail: (id: string) =>
    queryOptions({
      queryKey: templateKeys.detail(id),
      queryFn: ({ signal }) => apiJson({ path: path`/api/v1/templates/${id}`, signal }, readTemplate),
      refetchInterval: (q) => (isBuilding(q.state.data) ? BUILDING_POLL_MS : false),
    }),
  /**
   * The live sandboxes using templates: one template's (`id`) through the list's `template` filter,
   * or, with null, every live sandbox (the list page groups them by template: one request, not one
   * per row).
   */
  users: (id: string | null) =>
    queryOptions({
      queryKey: templateKeys.users(id),
      queryFn: ({ signal }) =>
        apiAll(
          { path: "/api/v1/sandboxes", query: { status: LIVE_STATUSES, ...(id ? { template: id } : {}) }, signal },
          readSandbox,
        ),
      staleTime: 15_000,
    }),
};

/** Live sandboxes by the template they run (`sandbox.template` is the custom template's id). */
export function sandboxesByTemplate(sandboxes: readonly Sandbox[] | undefined): Map<string, Sandbox[]> {
  const by = new Map<string, Sandbox[]>();
  for (const s of sandboxes ?? []) {
    const key = s.template;
    if (!key) continue;
    by.set(key, [...(by.get(key) ?? []), s]);
  }
  return by;
}

export const templateMutations = {
  /** 202: the build is queued; `idempotencyKey` makes a retried create return the first template. */
  create: (body: CreateTemplateBody, idempotencyKey?: string) =>
    apiJson(
      {
        method: "POST",
        path: "/api/v1/templates",
        body,
        headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : undefined,
      },
      readTemplate,
    ),
  delete: (id: string) => apiVoid({ method: "DELETE", path: path`/api/v1/templates/${id}` }),
};
