import "server-only";
import { beforeAll, describe, expect, it } from "vitest";
import { upsertConnection } from "../../lib/server/db/connections";
import { testBackends } from "../../lib/server/db/test-backends";
import { ReceivedFeed } from "../../lib/server/hooks/feed";
import { newReceiverId, recordEvent, saveReceiver } from "../../lib/server/hooks/store";
import { makeUser, uniq, useConsoleDb } from "./helpers";

// The live side of received events (lib/server/hooks/feed.ts): one reader per process that polls the
// shared database, so an event recorded by any instance reaches the tabs listening here; each tab
// hears only its own receivers' events, and nothing recorded before the reader started.

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe.each(testBackends)("the received-events feed on $name", (backend) => {
  const ctx = useConsoleDb(backend);
  const receivers: string[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const { user } = await makeUser(ctx.db(), "owner");
      const connection = await upsertConnection(ctx.db(), {
        userId: user.id,
        name: uniq("conn"),
        baseUrl: "https://api.orkestr.test",
        token: "ork_feed_test_token",
        activate: true,
      });
      const r = await saveReceiver(ctx.db(), {
        id: newReceiverId(),
        userId: user.id,
        connectionId: connection.id,
        webhookId: uniq("whk"),
        url: "http://baton.test/api/hooks/x",
        secret: "whsec_feed-test-secret-0123456789",
      });
      receivers.push(r.id);
    }
  });

  const record = (receiverId: string, eventId: string) =>
    recordEvent(ctx.db(), {
      receiverId,
      eventId,
      deliveryId: `dlv_${eventId}`,
      type: "sandbox.paused",
      sandboxId: "sbx_1",
      sandboxStatus: "paused",
      body: JSON.stringify({
        id: eventId,
        type: "sandbox.paused",
        data: { sandbox: { id: "sbx_1", status: "paused" } },
      }),
      eventCreatedAt: Date.now(),
    });

  it("sends each tab only its own receivers' new events, found by polling (another instance's writes)", async () => {
    const [mine, theirs] = receivers as [string, string];
    await record(mine, "evt_BEFORE");
    const feed = new ReceivedFeed(async () => ctx.db());
    const heardMine: string[] = [];
    const heardTheirs: string[] = [];
    const stopMine = feed.subscribe({ receiverIds: new Set([mine]), send: (t) => heardMine.push(t) });
    const stopTheirs = feed.subscribe({ receiverIds: new Set([theirs]), send: (t) => heardTheirs.push(t) });
    await feed.ready();

    // Recorded without a nudge, as another instance would: the next poll finds them.
    await record(mine, "evt_MINE");
    await record(theirs, "evt_THEIRS");
    await until(() => heardMine.length === 1 && heardTheirs.length === 1, "both events");
    expect(heardMine[0]).toMatch(/^event: received\ndata: .*"event_id":"evt_MINE"/);
    expect(heardTheirs[0]).toContain('"event_id":"evt_THEIRS"');
    // Nothing of the other tenant's, and nothing from before the reader started.
    expect(heardMine.join("")).not.toContain("evt_THEIRS");
    expect(heardMine.join("")).not.toContain("evt_BEFORE");
    expect(heardTheirs.join("")).not.toContain("evt_MINE");

    stopMine();
    await record(mine, "evt_AFTER");
    feed.nudge();
    await new Promise((r) => setTimeout(r, 100));
    expect(heardMine.join("")).not.toContain("evt_AFTER");
    stopTheirs();
    expect(feed.size).toBe(0);
  });
});
