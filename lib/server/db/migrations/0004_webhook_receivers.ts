import "server-only";
import type { Kysely } from "kysely";

// Baton's built-in webhook receiver ("Receive in Baton"). A receiver is one webhook Baton created on
// a user's connection, pointing at Baton's own `/api/hooks/<id>`; its signing secret is kept
// encrypted (AES-256-GCM, bound to the row id) and never leaves the server. Received events are the
// deliveries that passed the signature check: unique per receiver on the signed event id and on the
// delivery id, so a replay cannot be recorded twice even when two instances race on it.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("webhook_receivers")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("connection_id", "text", (c) => c.notNull().references("orkestr_connections.id").onDelete("cascade"))
    .addColumn("webhook_id", "text", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("secret_ciphertext", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  // One receiver per connection: a second click finds the first instead of subscribing twice.
  await db.schema
    .createIndex("webhook_receivers_connection_key")
    .on("webhook_receivers")
    .column("connection_id")
    .unique()
    .execute();
  await db.schema.createIndex("webhook_receivers_user_id_idx").on("webhook_receivers").column("user_id").execute();

  await db.schema
    .createTable("received_events")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("receiver_id", "text", (c) => c.notNull().references("webhook_receivers.id").onDelete("cascade"))
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("delivery_id", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("sandbox_id", "text")
    .addColumn("sandbox_status", "text")
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("event_created_at", "bigint", (c) => c.notNull())
    .addColumn("received_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("received_events_event_key")
    .on("received_events")
    .columns(["receiver_id", "event_id"])
    .unique()
    .execute();
  await db.schema
    .createIndex("received_events_delivery_key")
    .on("received_events")
    .columns(["receiver_id", "delivery_id"])
    .unique()
    .execute();
  // The feed pages newest first per receiver; each instance's live reader polls by arrival time.
  await db.schema
    .createIndex("received_events_receiver_id_idx")
    .on("received_events")
    .columns(["receiver_id", "id"])
    .execute();
  await db.schema.createIndex("received_events_received_at_idx").on("received_events").column("received_at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("received_events").execute();
  await db.schema.dropTable("webhook_receivers").execute();
}
