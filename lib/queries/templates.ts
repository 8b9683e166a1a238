import { queryOptions } from "@tanstack/react-query";
import { apiAll, apiJson } from "../api/core";
import { arrayOf, object } from "../api/read";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { BaseImage, Template } from "../orkestr/schemas/templates";

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

export const readTemplate = object<Template>({ id: "string" }, { status: "string" });
const readBaseImage = object<BaseImage>({ id: "string" });

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
};
