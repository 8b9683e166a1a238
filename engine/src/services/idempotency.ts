import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../errors.js";
import type { Db } from "../store/db.js";

/** How long a stored response answers a repeated Idempotency-Key (the contract's `Idempotency-Key` header on creating POSTs). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;

/**
 * `Idempotency-Key` on creating POSTs: the first successful response is stored per token, route
 * and key, and a retry with the same key gets that response again instead of a second resource.
 * A retry racing the first request waits for it.
 */
export class Idempotency {
  private inFlight = new Map<string, Promise<unknown>>();
  constructor(private readonly db: Db) {}

  async run(
    req: FastifyRequest,
    reply: FastifyReply,
    route: string,
    work: () => Promise<{ status: number; body: unknown }>,
  ): Promise<unknown> {
    const key = req.headers["idempotency-key"];
    if (key === undefined) {
      const r = await work();
      return reply.status(r.status).send(r.body);
    }
    if (typeof key !== "string" || key.length === 0 || key.length > 255) {
      throw new ApiError("bad_request", "Idempotency-Key must be 1-255 characters");
    }
    const tokenId = req.token?.id ?? "anonymous";
    const id = `${tokenId}\u0000${route}\u0000${key}`;
    while (this.inFlight.has(id)) await this.inFlight.get(id)!.catch(() => undefined);
    const stored = this.db
      .prepare("SELECT status, body FROM idempotency WHERE token_id = ? AND route = ? AND key = ? AND created_at > ?")
      .get(tokenId, route, key, Date.now() - IDEMPOTENCY_TTL_MS) as { status: number; body: string } | undefined;
    if (stored) return reply.status(stored.status).header("Idempotent-Replayed", "true").send(JSON.parse(stored.body));
    const p = work();
    this.inFlight.set(id, p);
    try {
      const r = await p;
      this.db.prepare("DELETE FROM idempotency WHERE created_at <= ?").run(Date.now() - IDEMPOTENCY_TTL_MS);
      this.db
        .prepare(
          "INSERT OR REPLACE INTO idempotency(token_id, route, key, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .run(tokenId, route, key, r.status, JSON.stringify(r.body), Date.now());
      return reply.status(r.status).send(r.body);
    } finally {
      this.inFlight.delete(id);
    }
  }
}
