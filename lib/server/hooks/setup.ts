import "server-only";
import { OrkestrError } from "../../orkestr/errors";
import type { Db } from "../db/index";
import { getEnv } from "../env";
import { activeConnection, VaultError, type ActiveConnection } from "../tokens";
import { withUpstream } from "../upstream";
import { UserFacingError } from "../user-error";
import { deleteReceiver, newReceiverId, receiverOfConnection, saveReceiver, type Receiver } from "./store";

// "Receive in Baton": one webhook on the user's active connection, made server-side through the
// typed client, delivering every event to Baton's own `/api/hooks/<id>`. The secret orkestr answers
// with goes straight into the database, encrypted; the browser only ever learns the receiver's id,
// its URL and the webhook's id.

export const RECEIVER_DESCRIPTION = "Baton's built-in receiver (Events page); its secret is kept by Baton";

export class ReceiverSetupError extends UserFacingError<"receiver_unreachable" | "receiver_bad_response"> {
  override name = "ReceiverSetupError";
  readonly status: number;
  constructor(code: "receiver_unreachable" | "receiver_bad_response", detail: string) {
    super(code, detail);
    this.status = code === "receiver_unreachable" ? 409 : 502;
  }
}

/**
 * The origin the upstream is told to deliver to. BATON_URL when set: it is the one name Baton
 * answers to (lib/host-policy.ts) and the one a remote orkestr can reach. Without it, the console's
 * own loopback listener, which only an engine on this machine reaches (and which `npm start` puts in
 * the engine's ORKESTR_ENGINE_WEBHOOK_ALLOW).
 */
export function receiverOrigin(connection: Pick<ActiveConnection, "isLocalEngine" | "baseUrl">): string {
  const env = getEnv();
  if (env.BATON_URL) return env.BATON_URL;
  if (connection.isLocalEngine) return `http://127.0.0.1:${env.PORT}`;
  throw new ReceiverSetupError(
    "receiver_unreachable",
    `${connection.baseUrl} cannot deliver to this Baton: it has no public address. Set BATON_URL to an https:// address ` +
      "the orkestr API can reach, restart Baton, and try again (the local engine needs none).",
  );
}

function activeOrThrow(connection: ActiveConnection | null): ActiveConnection {
  if (!connection)
    throw new VaultError(
      "no_connection",
      "You have no orkestr connection yet. Add one in Settings → Connections, or use the local engine.",
    );
  return connection;
}

const isNotFound = (err: unknown) => err instanceof OrkestrError && err.status === 404;

/** The receiver of the user's active connection, or null (no connection counts as none). */
export async function currentReceiver(db: Db, userId: string): Promise<Receiver | null> {
  const connection = await activeConnection(userId, { db });
  return connection ? receiverOfConnection(db, userId, connection.id) : null;
}

/**
 * Makes (or finds) the receiver of the user's active connection. A receiver whose webhook is gone
 * upstream (deleted on the webhooks page or by an API client) is made again; one that exists is
 * returned as it is, so a second click subscribes nothing twice.
 */
export async function receiveInBaton(db: Db, userId: string): Promise<{ receiver: Receiver; created: boolean }> {
  const connection = activeOrThrow(await activeConnection(userId, { db }));
  const existing = await receiverOfConnection(db, userId, connection.id);
  return withUpstream({ id: userId }, async (orkestr) => {
    if (existing) {
      try {
        await orkestr.webhooks.get(existing.webhookId);
        return { receiver: existing, created: false };
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    const id = newReceiverId();
    const url = `${receiverOrigin(connection)}/api/hooks/${id}`;
    // Every event type (omitted = all), so the feed and the live sandbox pages hear everything.
    const webhook = await orkestr.webhooks.create({ url, description: RECEIVER_DESCRIPTION });
    if (!webhook.secret) {
      await orkestr.webhooks.delete(webhook.id).catch(() => undefined);
      throw new ReceiverSetupError(
        "receiver_bad_response",
        `${connection.baseUrl} created the webhook without answering its secret, so Baton could not verify a delivery; it was deleted again.`,
      );
    }
    try {
      const receiver = await saveReceiver(db, {
        id,
        userId,
        connectionId: connection.id,
        webhookId: webhook.id,
        url,
        secret: webhook.secret,
      });
      return { receiver, created: true };
    } catch (err) {
      // Not kept: a webhook whose secret nobody holds would only fail every delivery.
      await orkestr.webhooks.delete(webhook.id).catch(() => undefined);
      throw err;
    }
  });
}

/** Stops receiving: deletes the upstream webhook (already gone is fine) and the receiver with its events. */
export async function stopReceiving(db: Db, userId: string, receiverId: string): Promise<boolean> {
  const connection = await activeConnection(userId, { db });
  const receiver = connection ? await receiverOfConnection(db, userId, connection.id) : null;
  if (!receiver || receiver.id !== receiverId) return false;
  await withUpstream({ id: userId }, async (orkestr) => {
    try {
      await orkestr.webhooks.delete(receiver.webhookId);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  });
  return deleteReceiver(db, userId, receiver.id);
}
