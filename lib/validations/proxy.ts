import { z } from "zod";

// Inputs of the /api/v1 proxy routes that the contract's schemas (lib/orkestr/schemas) do not
// already give: route params and the list query as the URL carries it.

export const SandboxIdParams = z.object({ id: z.string().min(1).max(200) });

/** GET /api/v1/sandboxes: the list query without metadata[k]=v (not proxied yet). */
export const ProxyListSandboxesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  cursor: z.string().min(1).optional(),
  status: z.union([z.string(), z.array(z.string())]).optional(),
  template: z.string().optional(),
  region: z.string().optional(),
});

/** POST /api/v1/sandboxes/{id}/exec/stream: ?format=ndjson asks the upstream for NDJSON instead of SSE. */
export const ExecStreamQuery = z.object({ format: z.enum(["sse", "ndjson"]).optional() });
