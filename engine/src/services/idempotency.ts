import type { FastifyReply, FastifyRequest } from "fastify";
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { ApiError } from "../errors.js";
import type { Db } from "../store/db.js";

/** How long a stored response answers a repeated Idempotency-Key (the contract's `Idempotency-Key` header on creating POSTs). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;

/**
 * Response fields that are secrets shown once (a webhook's `secret`, a sandbox's
 * `preview_auth_token`): a replay must return them (the contract: "the stored response"), but the
 * database must not hold them in the clear for 24 hours, where a backup or a copy of the file would
 * show them. They are stored sealed (below); the rest of the response is stored as it was.
 */
export const SECRET_FIELDS = ["secret", "preview_auth_token"] as const;

/**
 * AES-256-GCM with a key that is not in the database (the engine keeps it in a file of its own,
 * `<root>/idempotency.key`, 0600: app.ts), bound to its row (token, route, key) so a sealed value
 * cannot be moved to another row and replayed there.
 */
export class Sealer {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error("the sealing key must be 32 bytes");
  }

  seal(plain: string, bound: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(bound, "utf8"));
    const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return ["v1", iv, cipher.getAuthTag(), ct]
      .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
      .join(".");
  }

  /** The sealed text, or null when it cannot be opened (another key: the key file was replaced). */
  open(sealed: string, bound: string): string | null {
    const [v, iv, tag, ct] = sealed.split(".");
    if (v !== "v1" || iv === undefined || tag === undefined || ct === undefined) return null;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(bound, "utf8"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
    } catch {
      return null;
    }
  }
}

/** A response split for storage: the body with its secrets nulled, and the secrets by field. */
function splitSecrets(body: unknown): { stored: unknown; secrets: Record<string, string> | null } {
  if (!body || typeof body !== "object" || Array.isArray(body)) return { stored: body, secrets: null };
  const copy: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  const secrets: Record<string, string> = {};
  for (const f of SECRET_FIELDS) {
    if (typeof copy[f] === "string") {
      secrets[f] = copy[f] as string;
      // Kept as null, so the replay has its keys in the original order.
      copy[f] = null;
    }
  }
  return Object.keys(secrets).length ? { stored: copy, secrets } : { stored: body, secrets: null };
}

/**
 * `Idempotency-Key` on creating POSTs: the first successful response is stored per token, route
 * and key, and a retry with the same key gets that response again instead of a second resource.
 * A retry racing the first request waits for it. Secrets in the response are stored sealed.
 */
export class Idempotency {
  private inFlight = new Map<string, Promise<unknown>>();
  constructor(
    private readonly db: Db,
    private readonly sealer: Sealer,
  ) {}

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
      .prepare(
        "SELECT status, body, sealed FROM idempotency WHERE token_id = ? AND route = ? AND key = ? AND created_at > ?",
      )
      .get(tokenId, route, key, Date.now() - IDEMPOTENCY_TTL_MS) as
      { status: number; body: string; sealed: string | null } | undefined;
    if (stored) {
      const body = this.replayBody(stored, id);
      return reply.status(stored.status).header("Idempotent-Replayed", "true").send(body);
    }
    const p = work();
    this.inFlight.set(id, p);
    try {
      const r = await p;
      const { stored: toStore, secrets } = splitSecrets(r.body);
      this.db.prepare("DELETE FROM idempotency WHERE created_at <= ?").run(Date.now() - IDEMPOTENCY_TTL_MS);
      this.db
        .prepare(
          "INSERT OR REPLACE INTO idempotency(token_id, route, key, status, body, sealed, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .run(
          tokenId,
          route,
          key,
          r.status,
          JSON.stringify(toStore),
          secrets ? this.sealer.seal(JSON.stringify(secrets), id) : null,
          Date.now(),
        );
      return reply.status(r.status).send(r.body);
    } finally {
      this.inFlight.delete(id);
    }
  }

  /** The stored response with its secrets opened again; 409 when they cannot be (the key file changed). */
  private replayBody(stored: { body: string; sealed: string | null }, bound: string): unknown {
    const body = JSON.parse(stored.body) as Record<string, unknown>;
    if (stored.sealed === null) return body;
    const opened = this.sealer.open(stored.sealed, bound);
    if (opened === null) {
      const what = typeof body.id === "string" ? ` (${body.id})` : "";
      throw new ApiError(
        "idempotent_replay_unavailable",
        `The first request with this Idempotency-Key succeeded${what}, but the secret in its answer can no longer be ` +
          "read back: the engine's idempotency key file was replaced. Read the resource instead, and rotate its secret " +
          "(or preview token) to get a new one.",
        typeof body.id === "string" ? { resource_id: body.id } : {},
      );
    }
    return { ...body, ...(JSON.parse(opened) as Record<string, string>) };
  }
}
