import { queryOptions } from "@tanstack/react-query";
import { apiAll, apiJson, apiVoid } from "../api/core";
import { arrayOf, object } from "../api/read";
import { path } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { BaseImage, CreateTemplateBody, Template } from "../orkestr/schemas/templates";
import type { Sandbox } from "../orkestr/schemas/sandboxes";
import { readSandbox } from "./sandboxes";

// Templates and the built-in base images. One key per question: the create form's source picker
// and the list page's template filter ask the same one (templates with the built-ins), so they share
// one cache entry, and invalidating `templateKeys.all` refreshes every template query at once.

export const templateKeys = {
  all: ["templates"] as const,
  lists: () => ["templates", "list"] as const,
  list: (query: { include_builtin: boolean }) => ["templates", "list", query] as const,
  baseImages: () => ["templates", "base-images"] as const,
  detail: (id: string) => ["templates", "detail", id] as const,
  /** The sandboxes running a template: under "templates", refreshed with them. */
  users: (id: string | null) => ["templates", "users", id] as const,
};

const readTemplate = object<Template>({ id: "string" }, { status: "string" });
const readBaseImage = object<BaseImage>({ id: "string" });

/** While a build is queued or running its template is re-read this often (the log streams in between). */
export const BUILDING_POLL_MS = 3_000;

export const isBuilding = (t: Pick<Template, "status"> | undefined): boolean =>
  t?.status === "queued" || t?.status === "building";

/** Sandboxes that are, or may again be, using a template's layer (finished ones hold nothing). */
const LIVE_STATUSES = "creating,running,pausing,paused,resuming";

export const templateQueries = {
  /**
   * Every template (a few pages at most); `include_builtin` adds the built-ins, which the create form
   * needs when a server has no /base-images route.
   */
  list: (query: { include_builtin: boolean } = { include_builtin: true }) =>
    queryOptions({
      queryKey: templateKeys.list(query),
      queryFn: ({ signal }) => apiAll({ path: "/api/v1/templates", query, signal }, readTemplate),
      staleTime: 5 * 60_000,
    }),
  /** The built-in images (GET /v1/base-images): ids, descriptions, whether this server can run them. */
  baseImages: () =>
    queryOptions({
      queryKey: templateKeys.baseImages(),
      queryFn: ({ signal }) => apiJson({ path: "/api/v1/base-images", signal }, arrayOf(readBaseImage)),
      staleTime: 5 * 60_000,
    }),
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
