import { queryOptions } from "@tanstack/react-query";
import type { TokenScope } from "../api-tokens/scope";
import { apiJson } from "../api/core";
import { object } from "../api/read";
import { path } from "../orkestr/path";
import type { ApiTokensView, CreatedApiTokenDto } from "../validations/api-tokens";

// Personal API tokens in the browser (Settings → API tokens): the list (GET /api/tokens), making one
// (POST, the token in that answer only) and revoking one (DELETE). Callers invalidate ["api-tokens"].

export const apiTokenKeys = {
  all: ["api-tokens"] as const,
  list: () => ["api-tokens", "list"] as const,
};

const readView = object<ApiTokensView>({ tokens: "array", manages_all: "boolean", scopes: "array" });
const readCreated = object<CreatedApiTokenDto>({ token: "string", api_token: "object" });
const readRevoked = object<{ revoked: boolean; already: boolean }>({ revoked: "boolean" });

export const apiTokenQueries = {
  list: () =>
    queryOptions({
      queryKey: apiTokenKeys.list(),
      queryFn: ({ signal }) => apiJson({ path: "/api/tokens", signal }, readView),
      // "Last used" moves while the page is open (written at most once a minute per token).
      refetchInterval: 30_000,
    }),
};

export const apiTokenMutations = {
  create: (body: {
    name: string;
    scope: TokenScope;
    expires_in_days: number | null;
    spend_cap_micro?: number | null;
    max_concurrent_sandboxes?: number | null;
  }) => apiJson({ method: "POST", path: "/api/tokens", body }, readCreated),
  revoke: (id: string) => apiJson({ method: "DELETE", path: path`/api/tokens/${id}` }, readRevoked),
};
