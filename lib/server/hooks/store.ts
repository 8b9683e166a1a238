import "server-only";
import { z } from "zod";
import { decrypt, encrypt, randomToken } from "../crypto";
import { isUniqueViolation } from "../db/errors";
import type { Db } from "../db/index";
import { EpochDate, parseRow } from "../db/util";
import { newId } from "../ids";

// The receivers' rows and the events they recorded. Secrets are encrypted on the way in and
// decrypted only by receiverSecret(), for the signature check; nothing here hands one to a caller
// that answers a browser. Every read that serves a page is scoped to one user's connection.

/** How long received events are kept: far beyond the 5-minute window in which a replay must be caught. */
export const EVENT_RETENTION_MS = 7 * 86_400_000;

export interface Receiver {
  id: string;
  userId: string;
  connectionId: string;
  webhookId: string;
  url: string;
  createdAt: Date;
}

const ReceiverRow = z
  .object({
    id: z.string().min(1),
    user_id: z.string().min(1),
    connection_id: z.string().min(1),
    webhook_id: z.string().min(1),
    url: z.string().min(1),
    created_at: EpochDate,
  })
  .transform((r): Receiver => ({
    id: r.id,
    userId: r.user_id,
    connectionId: r.connection_id,
    webhookId: r.webhook_id,
    url: r.url,
    createdAt: r.created_at,
  }));

const RECEIVER_COLUMNS = ["id", "user_id", "connection_id", "webhook_id", "url", "created_at"] as const;

/** The associated data binding a secret's ciphertext to its receiver: decrypt with the same value. */
export const receiverSecretAad = (id: string) => `webhook_receivers:${id}:secret`;

/**
 * A new receiver id: `rcv_` and 192 random bits. It is the endpoint's path, so it must not be
 * guessable (a ULID's time part is), although a delivery still needs the secret's signature.
 */
export const newReceiverId = () => `rcv_${randomToken(24)}`;

/** The receiver of a connection (one per connection), or null. */
export async function receiverOfConnection(db: Db, userId: string, connectionId: string): Promise<Receiver | null> {
  const row = await db
    .selectFrom("webhook_receivers")
    .select(RECEIVER_COLUMNS)
    .where("user_id", "=", userId)
    .where("connection_id", "=", connectionId)
    .executeTakeFirst();
  return row ? parseRow("webhook_receivers", ReceiverRow, row) : null;
}

/** One of the user's receivers (another user's id gives null, like a missing one). */
export async function userReceiver(db: Db, userId: string, id: string): Promise<Receiver | null> {
  const row = await db
    .selectFrom("webhook_receivers")
    .select(RECEIVER_COLUMNS)
    .where("user_id", "=", userId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row ? parseRow("webhook_receivers", ReceiverRow, row) : null;
}

/** Stores a receiver with its secret encrypted; replaces the connection's earlier one (its webhook is gone). */
export async function saveReceiver(
  db: Db,
  input: { id: string; userId: string; connectionId: string; webhookId: string; url: string; secret: string },
  now = Date.now(),
): Promise<Receiver> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("webhook_receivers").where("connection_id", "=", input.connectionId).execute();
    await trx
      .insertInto("webhook_receivers")
      .values({
        id: input.id,
        user_id: input.userId,
        connection_id: input.connectionId,
        webhook_id: input.webhookId,
        url: input.url,
        secret_ciphertext: encrypt(input.secret, { aad: receiverSecretAad(input.id) }),
        created_at: now,
      })
      .execute();
  });
  const saved = await userReceiver(db, input.userId, input.id);
  if (!saved) throw new Error("the receiver just saved is not there");
  return saved;
}

/**
 * Whether a webhook id is one of Baton's receivers, any user's: the proxy's webhook routes refuse
 * to rotate, edit or delete those (lib/server/hooks/owned-webhooks.ts).
 */
export async function isReceiverWebhook(db: Db, webhookId: string): Promise<boolean> {
  const row = await db
    .selectFrom("webhook_receivers")
    .select("id")
    .where("webhook_id", "=", webhookId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The webhook ids of every receiver whose connection belongs to `teamId`, any member's (the webhooks
 * pages mark them, so a teammate is not offered what the API refuses on them). A connection belongs
 * to a team as lib/server/acting-team.ts boundTeamId() says: its own team, or, made without one, its
 * user's team while they are in exactly one. Never a receiver of another team's connection.
 */
export async function teamReceiverWebhookIds(db: Db, teamId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("webhook_receivers")
    .innerJoin("orkestr_connections", "orkestr_connections.id", "webhook_receivers.connection_id")
    .select("webhook_receivers.webhook_id")
    .where((eb) =>
      eb.or([
        eb("orkestr_connections.team_id", "=", teamId),
        eb.and([
          eb("orkestr_connections.team_id", "is", null),
          eb(
            "orkestr_connections.user_id",
            "in",
            eb
              .selectFrom("memberships")
              .select("memberships.user_id")
              .groupBy("memberships.user_id")
              .having((h) => h.fn.countAll(), "=", 1)
              .having((h) => h.fn.max("memberships.team_id"), "=", teamId),
          ),
        ]),
      ]),
    )
    .orderBy("webhook_receivers.created_at")
    .orderBy("webhook_receivers.webhook_id")
    .execute();
  return rows.map((r) => r.webhook_id);
}

export async function deleteReceiver(db: Db, userId: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom("webhook_receivers")
    .where("user_id", "=", userId)
    .where("id", "=", id)
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}

/**
 * For the receiving endpoint only: the receiver and its decrypted secret, or null for an id that
 * does not exist. A secret that no longer decrypts (the vault key changed) is null too: nothing
 * could verify a delivery for it.
 */
export async function receiverSecret(db: Db, id: string): Promise<{ receiver: Receiver; secret: string } | null> {
  const row = await db
    .selectFrom("webhook_receivers")
    .select([...RECEIVER_COLUMNS, "secret_ciphertext"])
    .where("id", "=", id)
    .executeTakeFirst();
  if (!row) return null;
  const receiver = parseRow("webhook_receivers", ReceiverRow, row);
  try {
    return { receiver, secret: decrypt(row.secret_ciphertext, { aad: receiverSecretAad(receiver.id) }) };
  } catch {
    return null;
  }
}

export interface ReceivedEvent {
  id: string;
  receiverId: string;
  eventId: string;
  deliveryId: string;
  type: string;
  sandboxId: string | null;
  sandboxStatus: string | null;
  /** The signed body, as received. */
  body: string;
  eventCreatedAt: Date;
  receivedAt: Date;
}

const EventRow = z
  .object({
    id: z.string().min(1),
    receiver_id: z.string().min(1),
    event_id: z.string().min(1),
    delivery_id: z.string().min(1),
    type: z.string().min(1),
    sandbox_id: z.string().nullable(),
    sandbox_status: z.string().nullable(),
    body: z.string(),
    event_created_at: EpochDate,
    received_at: EpochDate,
  })
  .transform((r): ReceivedEvent => ({
    id: r.id,
    receiverId: r.receiver_id,
    eventId: r.event_id,
    deliveryId: r.delivery_id,
    type: r.type,
    sandboxId: r.sandbox_id,
    sandboxStatus: r.sandbox_status,
    body: r.body,
    eventCreatedAt: r.event_created_at,
    receivedAt: r.received_at,
  }));

const EVENT_COLUMNS = [
  "received_events.id",
  "received_events.receiver_id",
  "received_events.event_id",
  "received_events.delivery_id",
  "received_events.type",
  "received_events.sandbox_id",
  "received_events.sandbox_status",
  "received_events.body",
  "received_events.event_created_at",
  "received_events.received_at",
] as const;

export interface NewReceivedEvent {
  receiverId: string;
  eventId: string;
  deliveryId: string;
  type: string;
  sandboxId: string | null;
  sandboxStatus: string | null;
  body: string;
  eventCreatedAt: number;
}

/**
 * Records a verified event; null when this receiver already has its event id or its delivery id
 * (a replay). The unique indexes decide, so two instances receiving the same delivery at once
 * record it once. Events past the retention period are dropped on the way.
 */
export async function recordEvent(db: Db, e: NewReceivedEvent, now = Date.now()): Promise<ReceivedEvent | null> {
  const id = newId("rev");
  try {
    await db
      .insertInto("received_events")
      .values({
        id,
        receiver_id: e.receiverId,
        event_id: e.eventId,
        delivery_id: e.deliveryId,
        type: e.type,
        sandbox_id: e.sandboxId,
        sandbox_status: e.sandboxStatus,
        body: e.body,
        event_created_at: e.eventCreatedAt,
        received_at: now,
      })
      .execute();
  } catch (err) {
    if (isUniqueViolation(err)) return null;
    throw err;
  }
  await db
    .deleteFrom("received_events")
    .where("receiver_id", "=", e.receiverId)
    .where("received_at", "<", now - EVENT_RETENTION_MS)
    .execute();
  return {
    id,
    receiverId: e.receiverId,
    eventId: e.eventId,
    deliveryId: e.deliveryId,
    type: e.type,
    sandboxId: e.sandboxId,
    sandboxStatus: e.sandboxStatus,
    body: e.body,
    eventCreatedAt: new Date(e.eventCreatedAt),
    receivedAt: new Date(now),
  };
}

/** The event a receiver already recorded under this event id, or null (what a redelivery is compared with). */
export async function receivedEvent(db: Db, receiverId: string, eventId: string): Promise<ReceivedEvent | null> {
  const row = await db
    .selectFrom("received_events")
    .select(EVENT_COLUMNS)
    .where("receiver_id", "=", receiverId)
    .where("event_id", "=", eventId)
    .executeTakeFirst();
  return row ? parseRow("received_events", EventRow, row) : null;
}

/**
 * A page of the events of the user's receiver on one connection, newest first (keyset on the
 * id, which sorts by arrival), optionally of one type. Scoped by user and connection in SQL: another
 * user's receiver is never joined in.
 */
export async function listEvents(
  db: Db,
  scope: { userId: string; connectionId: string },
  q: { type?: string; cursor?: string; limit: number },
): Promise<{ items: ReceivedEvent[]; next: string | null }> {
  let query = db
    .selectFrom("received_events")
    .innerJoin("webhook_receivers", "webhook_receivers.id", "received_events.receiver_id")
    .select(EVENT_COLUMNS)
    .where("webhook_receivers.user_id", "=", scope.userId)
    .where("webhook_receivers.connection_id", "=", scope.connectionId);
  if (q.type) query = query.where("received_events.type", "=", q.type);
  if (q.cursor) query = query.where("received_events.id", "<", q.cursor);
  const rows = await query
    .orderBy("received_events.id", "desc")
    .limit(q.limit + 1)
    .execute();
  const items = rows.slice(0, q.limit).map((r) => parseRow("received_events", EventRow, r));
  return { items, next: rows.length > q.limit ? (items.at(-1)?.id ?? null) : null };
}

/** Every receiver's events that arrived at or after `since` (the live readers' poll), oldest first. */
export async function eventsSince(db: Db, since: number, limit = 500): Promise<ReceivedEvent[]> {
  const rows = await db
    .selectFrom("received_events")
    .select(EVENT_COLUMNS)
    .where("received_at", ">=", since)
    .orderBy("received_at")
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((r) => parseRow("received_events", EventRow, r));
}
