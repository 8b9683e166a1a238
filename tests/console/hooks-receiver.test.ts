import "server-only";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { POST as receive } from "../../app/api/hooks/[id]/route";
import { GET as listEvents } from "../../app/api/hooks/events/route";
import { GET as live } from "../../app/api/hooks/events/live/route";
import { DELETE as deleteReceiver } from "../../app/api/hooks/receivers/[id]/route";
import { GET as getReceiver } from "../../app/api/hooks/receivers/route";
import { signBody } from "../../engine/src/services/webhooks/signing";
import { upsertConnection } from "../../lib/server/db/connections";
import { addMember } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { newReceiverId, saveReceiver } from "../../lib/server/hooks/store";
import { DELIVERY_FAILURE_LIMITS } from "../../lib/server/hooks/delivery-budget";
import { FEED_LIMITS } from "../../lib/server/hooks/feed-response";
import { MAX_DELIVERY_BYTES } from "../../lib/server/hooks/receive";
import { jsonOf, makeUser, noParams, sessionCookie, uniq, useConsoleDb } from "./helpers";

// Baton's receiving endpoint, POST /api/hooks/[id], with deliveries signed by the engine's own
// signing code: what it records, and everything it must refuse with nothing recorded. Then the
// feed's reads, scoped to the user whose connection the receiver is on.

const SECRET = "whsec_receiver-test-secret-0123456789";
let seq = 0;

interface Delivery {
  body: string;
  headers: Record<string, string>;
}

/** A delivery exactly as the engine's dispatcher sends one (services/webhooks/dispatcher.ts). */
function delivery(
  over: { type?: string; createdAt?: number; eventId?: string; secret?: string; status?: string } = {},
): Delivery {
  seq += 1;
  const type = over.type ?? "sandbox.paused";
  const body = JSON.stringify({
    id: over.eventId ?? `evt_TEST${seq}${Math.random().toString(36).slice(2, 8)}`,
    type,
    created_at: new Date(over.createdAt ?? Date.now() - 1_000).toISOString(),
    data: { sandbox: { id: "sbx_01RECEIVERTEST", status: over.status ?? "paused", metadata: { note: "ünïcode ✓" } } },
  });
  return {
    body,
    headers: {
      "content-type": "application/json",
      "user-agent": "orkestr-webhooks (baton-engine)",
      "x-orkestr-event": type,
      "x-orkestr-delivery": `dlv_TEST${seq}`,
      "x-orkestr-signature": signBody(over.secret ?? SECRET, body),
    },
  };
}

/** POSTs it server to server: Baton's Host, no Origin, no Sec-Fetch-Site, no cookie. */
function post(receiverId: string, d: { body: string | Buffer; headers: Record<string, string> }) {
  const req = new Request(`http://baton.test/api/hooks/${receiverId}`, {
    method: "POST",
    headers: { host: "baton.test", ...d.headers },
    body: typeof d.body === "string" ? d.body : new Uint8Array(d.body),
  });
  return receive(req, { params: Promise.resolve({ id: receiverId }) });
}

describe.each(testBackends)("the webhook receiver on $name", (backend) => {
  const ctx = useConsoleDb(backend);
  let owner: { id: string; cookie: string; teamId: string };
  let receiverId = "";
  let other: { id: string; cookie: string; receiverId: string };

  /** A receiver on a new connection of the user's, made without a team unless `teamId` is given. */
  async function receiverFor(userId: string, secret: string, teamId?: string) {
    const connection = await upsertConnection(ctx.db(), {
      userId,
      teamId,
      name: uniq("conn"),
      baseUrl: "https://api.orkestr.test",
      token: "ork_receiver_test_token",
      activate: true,
    });
    const receiver = await saveReceiver(ctx.db(), {
      id: newReceiverId(),
      userId,
      connectionId: connection.id,
      webhookId: `whk_${uniq("w")}`,
      url: "http://baton.test/api/hooks/x",
      secret,
    });
    return receiver.id;
  }

  const count = async () =>
    Number(
      (
        await ctx
          .db()
          .selectFrom("received_events")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );

  async function events(cookie: string, query = "") {
    const res = await listEvents(
      new Request(`http://baton.test/api/hooks/events${query}`, { headers: { host: "baton.test", cookie } }),
      noParams,
    );
    expect(res.status).toBe(200);
    return (await jsonOf(res)) as {
      items: { event_id: string; type: string; sandbox_id: string; verified: boolean }[];
    };
  }

  beforeAll(async () => {
    const a = await makeUser(ctx.db(), "owner");
    owner = { id: a.user.id, cookie: (await sessionCookie(ctx.db(), a.user.id)).cookie, teamId: a.teamId! };
    receiverId = await receiverFor(owner.id, SECRET);
    const b = await makeUser(ctx.db(), "owner");
    other = {
      id: b.user.id,
      cookie: (await sessionCookie(ctx.db(), b.user.id)).cookie,
      receiverId: await receiverFor(b.user.id, "whsec_someone-elses-secret-0123456789"),
    };
  });

  async function refused(res: Response, status: number, code: string) {
    expect(res.status).toBe(status);
    const body = await jsonOf(res);
    expect(body).toMatchObject({ code, detail: expect.any(String) });
  }

  it("records a delivery signed with the receiver's secret, once", async () => {
    const before = await count();
    const d = delivery({ type: "sandbox.resumed", status: "running" });
    const res = await post(receiverId, d);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toMatchObject({ received: expect.stringMatching(/^rev_/) });
    expect(await count()).toBe(before + 1);
    const event = JSON.parse(d.body) as { id: string };
    const listed = await events(owner.cookie);
    expect(listed.items[0]).toMatchObject({
      event_id: event.id,
      type: "sandbox.resumed",
      sandbox_id: "sbx_01RECEIVERTEST",
      verified: true,
    });
  });

  it("refuses a forged signature (another secret) and records nothing", async () => {
    const before = await count();
    await refused(
      await post(receiverId, delivery({ secret: "whsec_not-the-secret-0123456789" })),
      401,
      "bad_signature",
    );
    expect(await count()).toBe(before);
  });

  it("refuses a body altered by one byte after signing", async () => {
    const before = await count();
    const d = delivery();
    const bytes = Buffer.from(d.body, "utf8");
    // "paused" → "pauseD" in the sandbox status: the JSON still parses, the event still looks right.
    const at = bytes.lastIndexOf("paused");
    bytes[at + 5] = "D".charCodeAt(0);
    await refused(await post(receiverId, { body: bytes, headers: d.headers }), 401, "bad_signature");
    expect(await count()).toBe(before);
  });

  it("refuses the same event re-formatted: the signature is over the bytes, not the parsed JSON", async () => {
    const before = await count();
    const d = delivery();
    // Equal as JSON (a verifier that re-serializes the parsed body would accept it), not as bytes.
    const reformatted = JSON.stringify(JSON.parse(d.body), null, 1);
    await refused(await post(receiverId, { body: reformatted, headers: d.headers }), 401, "bad_signature");
    expect(await count()).toBe(before);
  });

  it("refuses a delivery without a signature, or with one of the wrong shape", async () => {
    const before = await count();
    const d = delivery();
    const { "x-orkestr-signature": signature, ...unsigned } = d.headers;
    await refused(await post(receiverId, { body: d.body, headers: unsigned }), 401, "bad_signature");
    await refused(
      await post(receiverId, {
        body: d.body,
        headers: { ...unsigned, "x-orkestr-signature": signature!.replace("sha256=", "sha1=") },
      }),
      401,
      "bad_signature",
    );
    expect(await count()).toBe(before);
  });

  it("refuses a stale event (signed correctly, 6 minutes old) and one dated ahead", async () => {
    const before = await count();
    await refused(await post(receiverId, delivery({ createdAt: Date.now() - 6 * 60_000 })), 401, "stale_delivery");
    await refused(await post(receiverId, delivery({ createdAt: Date.now() + 6 * 60_000 })), 401, "stale_delivery");
    expect(await count()).toBe(before);
  });

  it("answers a redelivery of an event it has (the same bytes, a new delivery id, days later) 200 duplicate, recorded once", async () => {
    const d = delivery();
    const first = await post(receiverId, d);
    expect(first.status).toBe(200);
    const { received } = (await jsonOf(first)) as { received: string };
    const before = await count();
    // The engine's retry of a delivery whose answer it never saw, and its redeliver route's fresh
    // delivery (a new X-Orkestr-Delivery, the same event and body, signed again).
    for (const headers of [d.headers, { ...d.headers, "x-orkestr-delivery": "dlv_REDELIVEREDBYTHEENGINE" }]) {
      const again = await post(receiverId, { body: d.body, headers });
      expect(again.status).toBe(200);
      expect(await jsonOf(again)).toEqual({ status: "duplicate", received, event_id: JSON.parse(d.body).id });
    }
    // Redelivered ten minutes later: past the age a new event may have, but this one is no new event.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 10 * 60_000 });
    try {
      const late = await post(receiverId, {
        body: d.body,
        headers: { ...d.headers, "x-orkestr-delivery": "dlv_LATE" },
      });
      expect(late.status).toBe(200);
      expect(await jsonOf(late)).toMatchObject({ status: "duplicate", received });
    } finally {
      vi.useRealTimers();
    }
    expect(await count()).toBe(before);
  });

  it("refuses a new event under a delivery id it has, and other bytes under an event id it has", async () => {
    const d = delivery();
    expect((await post(receiverId, d)).status).toBe(200);
    const before = await count();
    const fresh = delivery();
    await refused(
      await post(receiverId, {
        body: fresh.body,
        headers: { ...fresh.headers, "x-orkestr-delivery": d.headers["x-orkestr-delivery"]! },
      }),
      401,
      "replayed_delivery",
    );
    // Signed with the secret, but not the event recorded under that id: not a redelivery.
    const other = delivery({ eventId: JSON.parse(d.body).id, status: "running" });
    await refused(await post(receiverId, other), 409, "conflicting_event");
    expect(await count()).toBe(before);
  });

  it("refuses a delivery to an id no receiver has, and one signed for another receiver", async () => {
    const before = await count();
    await refused(await post(newReceiverId(), delivery()), 401, "unknown_receiver");
    await refused(await post("rcv_", delivery()), 401, "unknown_receiver");
    // A valid signature with this receiver's secret sent to someone else's receiver.
    await refused(await post(other.receiverId, delivery()), 401, "bad_signature");
    expect(await count()).toBe(before);
  });

  it("refuses an X-Orkestr-Event that is not the signed type", async () => {
    const before = await count();
    const d = delivery({ type: "sandbox.paused" });
    await refused(
      await post(receiverId, { body: d.body, headers: { ...d.headers, "x-orkestr-event": "sandbox.terminated" } }),
      401,
      "event_mismatch",
    );
    expect(await count()).toBe(before);
  });

  it("refuses a body over the limit with 413, declared or streamed", async () => {
    const before = await count();
    const big = JSON.stringify({ pad: "x".repeat(MAX_DELIVERY_BYTES) });
    const d = delivery();
    await refused(await post(receiverId, { body: big, headers: d.headers }), 413, "payload_too_large");
    // Chunked, without a Content-Length: refused once the bytes read pass the limit.
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 5; i++) c.enqueue(new Uint8Array(MAX_DELIVERY_BYTES / 4));
        c.close();
      },
    });
    const req = new Request(`http://baton.test/api/hooks/${receiverId}`, {
      method: "POST",
      headers: { host: "baton.test", ...d.headers },
      body: stream,
      // @ts-expect-error Node's fetch needs it for a stream body
      duplex: "half",
    });
    await refused(await receive(req, { params: Promise.resolve({ id: receiverId }) }), 413, "payload_too_large");
    expect(await count()).toBe(before);
  });

  describe("a flood from one address", () => {
    /**
     * A 250 KiB body (as in the outside review's flood) that is made only when read: `pulls` says
     * whether anyone read it. highWaterMark 0, so nothing is pulled ahead of a read.
     */
    function lazyBody() {
      const size = 250 * 1024;
      const probe = { pulls: 0 };
      const stream = new ReadableStream<Uint8Array>(
        {
          pull(c) {
            probe.pulls += 1;
            c.enqueue(new Uint8Array(size).fill(0x78));
            c.close();
          },
        },
        { highWaterMark: 0 },
      );
      return { stream, probe, size };
    }

    function postFrom(ip: string, id: string, body: ReadableStream<Uint8Array>, size: number) {
      const req = new Request(`http://baton.test/api/hooks/${id}`, {
        method: "POST",
        headers: {
          host: "baton.test",
          "x-baton-client-ip": ip,
          "content-type": "application/json",
          "content-length": String(size),
          "x-orkestr-signature": `sha256=${"0".repeat(64)}`,
        },
        body,
        // @ts-expect-error Node's fetch needs it for a stream body
        duplex: "half",
      });
      return receive(req, { params: Promise.resolve({ id }) });
    }

    it("answers 429 with Retry-After once the address's refused deliveries pass its budget, reading no unknown receiver's body", async () => {
      const limit = DELIVERY_FAILURE_LIMITS.limit;
      const flood = Array.from({ length: limit + 40 }, () => lazyBody());
      // All at once, as the review's 300 posts in 2 s: none may slip past the budget by racing.
      const answers = await Promise.all(flood.map((b) => postFrom("203.0.113.66", newReceiverId(), b.stream, b.size)));
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 401)).toHaveLength(limit);
      expect(statuses.filter((s) => s === 429)).toHaveLength(40);
      const limited = answers.find((r) => r.status === 429)!;
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(Number(limited.headers.get("retry-after"))).toBeLessThanOrEqual(DELIVERY_FAILURE_LIMITS.windowMs / 1000);
      expect(await jsonOf(limited)).toMatchObject({
        code: "rate_limited",
        detail: expect.stringContaining("Try again"),
      });
      // No body was read: not for an unknown receiver (401), not past the budget (429).
      expect(flood.map((b) => b.probe.pulls)).toEqual(flood.map(() => 0));

      // Past the budget even a delivery to a real receiver is refused unread; another address is not held back.
      const late = lazyBody();
      expect((await postFrom("203.0.113.66", receiverId, late.stream, late.size)).status).toBe(429);
      expect(late.probe.pulls).toBe(0);
      const elsewhere = delivery();
      const fromElsewhere = await post(receiverId, {
        body: elsewhere.body,
        headers: { ...elsewhere.headers, "x-baton-client-ip": "203.0.113.67" },
      });
      expect(fromElsewhere.status).toBe(200);
    });

    it("a known receiver's body is read, and deliveries to it that are refused count against the budget too", async () => {
      const ip = "203.0.113.68";
      for (let i = 0; i < DELIVERY_FAILURE_LIMITS.limit; i++) {
        const b = lazyBody();
        // Unsigned: read (the receiver exists), then refused.
        expect((await postFrom(ip, receiverId, b.stream, b.size)).status).toBe(401);
        expect(b.probe.pulls).toBe(1);
      }
      const b = lazyBody();
      expect((await postFrom(ip, receiverId, b.stream, b.size)).status).toBe(429);
    });

    it("accepted deliveries cost nothing: an engine's burst of valid events is never held back", async () => {
      const ip = "203.0.113.69";
      const before = await count();
      for (let i = 0; i < DELIVERY_FAILURE_LIMITS.limit + 10; i++) {
        const d = delivery();
        const res = await post(receiverId, { body: d.body, headers: { ...d.headers, "x-baton-client-ip": ip } });
        expect(res.status).toBe(200);
      }
      expect(await count()).toBe(before + DELIVERY_FAILURE_LIMITS.limit + 10);
    });
  });

  it("refuses a browser page posting from another site, and a Host Baton does not serve", async () => {
    const before = await count();
    const d = delivery();
    await refused(
      await post(receiverId, {
        body: d.body,
        headers: { ...d.headers, origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      }),
      403,
      "bad_origin",
    );
    await refused(
      await post(receiverId, { body: d.body, headers: { ...d.headers, host: "evil.example" } }),
      421,
      "host_not_allowed",
    );
    expect(await count()).toBe(before);
  });

  it("filters the feed by type", async () => {
    expect((await post(receiverId, delivery({ type: "sandbox.terminated", status: "terminated" }))).status).toBe(200);
    const only = await events(owner.cookie, "?type=sandbox.terminated");
    expect(only.items.length).toBeGreaterThan(0);
    expect(only.items.every((e) => e.type === "sandbox.terminated")).toBe(true);
  });

  it("refuses a session's received-events stream past the per-session cap with 429, and counts closed ones out", async () => {
    const open = (cookie: string, signal: AbortSignal) =>
      live(
        new Request("http://baton.test/api/hooks/events/live", { headers: { host: "baton.test", cookie }, signal }),
        noParams,
      );
    const cap = FEED_LIMITS.streamsPerSession;
    FEED_LIMITS.streamsPerSession = 3;
    const tabs = [new AbortController(), new AbortController(), new AbortController()];
    try {
      const streams = await Promise.all(tabs.map((t) => open(owner.cookie, t.signal)));
      expect(streams.map((r) => r.status)).toEqual([200, 200, 200]);
      const fourth = await open(owner.cookie, new AbortController().signal);
      expect(fourth.status).toBe(429);
      expect(fourth.headers.get("retry-after")).toBe("3");
      expect(await jsonOf(fourth)).toMatchObject({ code: "rate_limited", detail: expect.stringMatching(/Close some/) });
      // Another sign-in of the same user (another browser) is not held back by this one's streams.
      const { cookie: secondBrowser } = await sessionCookie(ctx.db(), owner.id);
      const there = new AbortController();
      const fromThere = await open(secondBrowser, there.signal);
      expect(fromThere.status).toBe(200);
      there.abort();
      await fromThere.body?.cancel();
      // A tab that closes frees its place.
      tabs[0]!.abort();
      await streams[0]!.body?.cancel();
      const again = new AbortController();
      const reopened = await open(owner.cookie, again.signal);
      expect(reopened.status).toBe(200);
      again.abort();
      await reopened.body?.cancel();
      for (const s of streams.slice(1)) await s.body?.cancel();
    } finally {
      FEED_LIMITS.streamsPerSession = cap;
      for (const t of tabs) t.abort();
    }
  });

  describe("tenant isolation", () => {
    it("another user reads none of the owner's events, even with events of their own", async () => {
      const theirs = delivery({ secret: "whsec_someone-elses-secret-0123456789", type: "sandbox.created" });
      expect((await post(other.receiverId, theirs)).status).toBe(200);
      const mine = await events(owner.cookie);
      const seen = await events(other.cookie);
      expect(seen.items.map((e) => e.event_id)).toEqual([JSON.parse(theirs.body).id]);
      expect(mine.items.map((e) => e.event_id)).not.toContain(JSON.parse(theirs.body).id);
    });

    it("another user's receiver is not theirs to see or delete", async () => {
      const res = await getReceiver(
        new Request("http://baton.test/api/hooks/receivers", { headers: { host: "baton.test", cookie: other.cookie } }),
        noParams,
      );
      expect(((await jsonOf(res)) as { receiver: { id: string } }).receiver.id).toBe(other.receiverId);
      const del = await deleteReceiver(
        new Request(`http://baton.test/api/hooks/receivers/${receiverId}`, {
          method: "DELETE",
          headers: {
            host: "baton.test",
            cookie: other.cookie,
            origin: "http://baton.test",
            "sec-fetch-site": "same-origin",
          },
        }),
        { params: Promise.resolve({ id: receiverId }) },
      );
      expect(del.status).toBe(404);
      expect(
        await ctx.db().selectFrom("webhook_receivers").select("id").where("id", "=", receiverId).executeTakeFirst(),
      ).toBeDefined();
    });

    it("team_webhook_ids names the receivers of the acting team's connections, a teammate's included, and never another team's", async () => {
      const mate = await makeUser(ctx.db(), null);
      await addMember(ctx.db(), { teamId: owner.teamId, userId: mate.user.id, role: "member" });
      const matesReceiver = await receiverFor(mate.user.id, "whsec_a-teammates-secret-0123456789", owner.teamId);
      const third = await makeUser(ctx.db(), "owner");
      const thirdsReceiver = await receiverFor(third.user.id, "whsec_a-third-teams-secret-012345678", third.teamId!);
      const hookOf = async (id: string) =>
        (
          await ctx
            .db()
            .selectFrom("webhook_receivers")
            .select("webhook_id")
            .where("id", "=", id)
            .executeTakeFirstOrThrow()
        ).webhook_id;
      const teamIds = async (cookie: string) => {
        const res = await getReceiver(
          new Request("http://baton.test/api/hooks/receivers", { headers: { host: "baton.test", cookie } }),
          noParams,
        );
        expect(res.status).toBe(200);
        return ((await jsonOf(res)) as { team_webhook_ids: string[] }).team_webhook_ids;
      };
      // The owner's connection was made without a team: it is their one team's.
      const ownersTeam = [await hookOf(receiverId), await hookOf(matesReceiver)];
      expect((await teamIds(owner.cookie)).sort()).toEqual(ownersTeam.sort());
      const mateCookie = (await sessionCookie(ctx.db(), mate.user.id)).cookie;
      expect((await teamIds(mateCookie)).sort()).toEqual(ownersTeam.sort());
      expect(await teamIds(other.cookie)).toEqual([await hookOf(other.receiverId)]);
      const thirdCookie = (await sessionCookie(ctx.db(), third.user.id)).cookie;
      expect(await teamIds(thirdCookie)).toEqual([await hookOf(thirdsReceiver)]);
    });

    it("a user with no receiver gets no stream (204), so nothing of anyone else's", async () => {
      const c = await makeUser(ctx.db(), "owner");
      const { cookie } = await sessionCookie(ctx.db(), c.user.id);
      const res = await live(
        new Request("http://baton.test/api/hooks/events/live", { headers: { host: "baton.test", cookie } }),
        noParams,
      );
      expect(res.status).toBe(204);
    });

    it("never answers the secret, and stores it only encrypted", async () => {
      const res = await getReceiver(
        new Request("http://baton.test/api/hooks/receivers", { headers: { host: "baton.test", cookie: owner.cookie } }),
        noParams,
      );
      expect(JSON.stringify(await jsonOf(res))).not.toContain("whsec_");
      const row = await ctx
        .db()
        .selectFrom("webhook_receivers")
        .select("secret_ciphertext")
        .where("id", "=", receiverId)
        .executeTakeFirstOrThrow();
      expect(row.secret_ciphertext).toMatch(/^v1:/);
      expect(row.secret_ciphertext).not.toContain(SECRET);
    });
  });
});
