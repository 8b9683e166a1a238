import type { FastifyPluginAsync, FastifyReply, FastifyRequest, FastifyTypeProvider, RawServerDefault } from "fastify";
import type { z } from "zod";
import type { EngineContext } from "../context.js";

/**
 * Requests are typed from the routes' zod schemas (what the validator hands the handler). Answers
 * are not: the services' views are wider than their documented schemas (a status typed `string`),
 * so the documented shape is checked at run time instead, on every test engine (lib/serialize.ts).
 */
export interface EngineTypeProvider extends FastifyTypeProvider {
  validator: this["schema"] extends z.ZodType ? z.output<this["schema"]> : unknown;
  serializer: unknown;
}

/** A resource's routes: an encapsulated Fastify plugin over the engine's services. */
export type ResourcePlugin = FastifyPluginAsync<{ ctx: EngineContext }, RawServerDefault, EngineTypeProvider>;

/**
 * One page of a cursor-paged list: the items are the body, the cursor of the next page (if any)
 * goes in X-Next-Cursor, as every list route of the contract answers.
 */
export function sendPage<T>(reply: FastifyReply, page: { items: T[]; next: string | null | undefined }): T[] {
  if (page.next) reply.header("X-Next-Cursor", page.next);
  return page.items;
}

/**
 * Root preValidation hook: a query key given more than once keeps its first value, on every route,
 * except the keys the route's `config.repeatableQuery` names (e.g. ?status=running&status=paused on
 * the sandbox list). One rule for the whole API, so `?limit=1&limit=2` reads the same everywhere.
 */
export async function firstQueryValues(req: FastifyRequest): Promise<void> {
  const q = req.query as Record<string, unknown> | undefined;
  if (!q) return;
  const keep = req.routeOptions.config?.repeatableQuery ?? [];
  for (const [k, v] of Object.entries(q)) if (Array.isArray(v) && !keep.includes(k)) q[k] = v[0];
}
