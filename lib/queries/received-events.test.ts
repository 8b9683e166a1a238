import { afterEach, describe, expect, it, vi } from "vitest";
import {
  receivedEventQueries,
  withoutReceiver,
  withReceiver,
  type Receiver,
  type ReceiverAnswer,
} from "./received-events";

// GET /api/hooks/receivers in the browser: one answer, read tolerantly, from which the Events page
// takes the user's receiver and the webhooks pages whose receiver a webhook is.

const mine: Receiver = {
  id: "rcv_mine",
  webhook_id: "wh_mine",
  url: "http://127.0.0.1:3000/api/hooks/rcv_mine",
  created_at: "2025-01-01T00:00:00.000Z",
};

/** The answer the query keeps for a server body, fetched through the real browser core. */
async function answerFor(body: unknown): Promise<ReceiverAnswer> {
  vi.stubGlobal("fetch", async () => Response.json(body));
  const queryFn = receivedEventQueries.receiver().queryFn as (ctx: { signal: AbortSignal }) => Promise<ReceiverAnswer>;
  return queryFn({ signal: new AbortController().signal });
}

const ownerOf = (webhookId: string, answer: ReceiverAnswer) =>
  receivedEventQueries.receiverOwner(webhookId).select!(answer);

afterEach(() => vi.unstubAllGlobals());

describe("the receivers answer", () => {
  it("tells the user's own receiver from a teammate's, and a webhook that is neither", async () => {
    const answer = await answerFor({ receiver: mine, team_webhook_ids: ["wh_mine", "wh_mates"] });
    expect(receivedEventQueries.receiver().select!(answer)).toEqual(mine);
    expect(ownerOf("wh_mine", answer)).toBe("yours");
    expect(ownerOf("wh_mates", answer)).toBe("teammate");
    expect(ownerOf("wh_other", answer)).toBeNull();
  });

  it("reads an answer without the list, or with a malformed one, as marking nothing but the user's own", async () => {
    for (const body of [
      { receiver: mine },
      { receiver: mine, team_webhook_ids: "wh_mates" },
      { receiver: mine, team_webhook_ids: [42, null, "wh_mates"] },
    ]) {
      const answer = await answerFor(body);
      expect(ownerOf("wh_mine", answer)).toBe("yours");
      expect(ownerOf("42", answer)).toBeNull();
    }
    expect((await answerFor({ receiver: null, team_webhook_ids: [42, "wh_mates"] })).teamWebhookIds).toEqual([
      "wh_mates",
    ]);
    expect(await answerFor({})).toEqual({ receiver: null, teamWebhookIds: [] });
  });

  it("keeps the team's list when the user's receiver is made or stopped", () => {
    const before: ReceiverAnswer = { receiver: null, teamWebhookIds: ["wh_mates"] };
    const made = withReceiver(mine)(before);
    expect(made).toEqual({ receiver: mine, teamWebhookIds: ["wh_mates", "wh_mine"] });
    expect(withReceiver(mine)(made).teamWebhookIds).toEqual(["wh_mates", "wh_mine"]);
    expect(withoutReceiver(mine)(made)).toEqual(before);
    expect(withReceiver(mine)(undefined)).toEqual({ receiver: mine, teamWebhookIds: ["wh_mine"] });
  });
});
