import "server-only";
import { OrkestrError } from "../../orkestr/errors";
import type { ActingTeam } from "../acting-team";
import type { Db } from "../db/index";
import { getEnv } from "../env";
import { isLocalEngineConnection } from "../tokens";
import { upstreamConnection, withUpstream } from "../upstream";
import { UserFacingError } from "../user-error";
import { deleteReceiver, newReceiverId, receiverOfConnection, saveReceiver, type Receiver } from "./store";

// "Receive in Baton": one webhook on the connection the request acts through (the acting team's,
// lib/server/acting-team.ts), made server-side through the
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
export function receiverOrigin(connection: { isLocalEngine: boolean; baseUrl: string }): string {
  const env = getEnv();
  if (env.BATON_URL) return env.BATON_URL;
  if (connection.isLocalEngine) return `http://127.0.0.1:${env.PORT}`;
  throw new ReceiverSetupError(
    "receiver_unreachable",
    `${connection.baseUrl} cannot deliver to this Baton: it has no public address. Set BATON_URL to an https:// address ` +
      "the orkestr API can reach, restart Baton, and try again (the local engine needs none).",
  );
}

const isNotFound = (err: unknown) => err instanceof OrkestrError && err.status === 404;

/** The receiver of the acting team's connection, or null (no team or connection counts as none). */
export async function currentReceiver(db: Db, team: ActingTeam | null): Promise<Receiver | null> {
  return team?.connection ? receiverOfConnection(db, team.userId, team.connection.id) : null;
}

/**
 * Makes (or finds) the receiver of the acting team's connection. A receiver whose webhook is gone
 * upstream (deleted on the webhooks page or by an API client) is made again; one that exists is
 * returned as it is, so a second click subscribes nothing twice.
 */
export async function receiveInBaton(
  db: Db,
  team: ActingTeam | null,
): Promise<{ receiver: Receiver; created: boolean }> {
  const connection = upstreamConnection(team);
  const userId = team!.userId;
  const existing = await receiverOfConnection(db, userId, connection.id);
  return withUpstream(team, async (orkestr) => {
    if (existing) {
      try {
        await orkestr.webhooks.get(existing.webhookId);
        return { receiver: existing, created: false };
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    const id = newReceiverId();
    const url = `${receiverOrigin({ baseUrl: connection.baseUrl, isLocalEngine: isLocalEngineConnection(connection) })}/api/hooks/${id}`;
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
export async function stopReceiving(db: Db, team: ActingTeam | null, receiverId: string): Promise<boolean> {
  const receiver = await currentReceiver(db, team);
  if (!team || !receiver || receiver.id !== receiverId) return false;
  const userId = team.userId;
  await withUpstream(team, async (orkestr) => {
    try {
      await orkestr.webhooks.delete(receiver.webhookId);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  });
  return deleteReceiver(db, userId, receiver.id);
}
