"use client";

import { useQuery } from "@tanstack/react-query";
import { HOSTED_API } from "../../lib/code/snippet";
import { connectionQueries } from "../../lib/queries/connections";

/**
 * The active connection's API base URL, for the snippets (never its token): the header's status
 * query, already cached on every page, so this costs no request of its own.
 */
export function useApiBaseUrl(): string {
  const status = useQuery(connectionQueries.status());
  return status.data?.connection?.base_url ?? HOSTED_API;
}
