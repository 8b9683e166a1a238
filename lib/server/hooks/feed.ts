import "server-only";
import { sseFrame } from "../live/sandbox-hub";
import type { Db } from "../db/index";
import { eventsSince, type ReceivedEvent } from "./store";
import { eventView } from "./view";

// The live side of received events: one reader per Baton process, whatever the number of tabs.
// Deliveries may land on any instance sharing the database, so the reader polls the database
// (one indexed query a second, only while a tab listens) and is also nudged at once when this
// process records one. Each tab hears only the events of the receivers it was allowed at subscribe.

/** How often the reader looks for events recorded by other instances. */
export const FEED_POLL_MS = 1_000;
/**
 * How far back each poll looks. Rows are stamped with their instance's clock and committed a moment
 * after it, so a strict "after the last one seen" cursor could skip one; ids seen are remembered
 * for twice this long instead.
 */
const LOOKBACK_MS = 30_000;

export interface FeedSubscriber {
  /** The receivers whose events this tab may see (the user's own). */
  receiverIds: ReadonlySet<string>;
  send(text: string): void;
}

export class ReceivedFeed {
  private readonly subscribers = new Set<FeedSubscriber>();
  private readonly seen = new Map<string, number>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private polling: Promise<void> | null = null;
  private again = false;
  private primed = false;
  private primedWaiters: (() => void)[] = [];
  /** Bumped when the last tab leaves: a poll still in flight then belongs to a reader that stopped. */
  private generation = 0;

  constructor(
    private readonly db: () => Promise<Db>,
    private readonly log: (msg: string) => void = (m) => console.error(m),
  ) {}

  get size(): number {
    return this.subscribers.size;
  }

  subscribe(s: FeedSubscriber): () => void {
    this.subscribers.add(s);
    if (this.subscribers.size === 1) this.poke();
    return () => {
      this.subscribers.delete(s);
      if (this.subscribers.size === 0) this.stop();
    };
  }

  /**
   * Settles once the reader has read what is already there: a tab that loads the history after
   * this and then hears the stream misses nothing between the two.
   */
  ready(): Promise<void> {
    if (this.primed) return Promise.resolve();
    return new Promise((resolve) => this.primedWaiters.push(resolve));
  }

  /** This process just recorded an event: read now rather than at the next tick. */
  nudge(): void {
    if (this.subscribers.size > 0) this.poke();
  }

  private stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.generation += 1;
    this.seen.clear();
    this.primed = false;
    this.release();
  }

  private release(): void {
    const waiters = this.primedWaiters;
    this.primedWaiters = [];
    for (const w of waiters) w();
  }

  private poke(): void {
    if (this.polling) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.polling = this.poll().finally(() => {
      this.polling = null;
      if (this.subscribers.size === 0) return;
      if (this.again) {
        this.again = false;
        return this.poke();
      }
      this.timer = setTimeout(() => this.poke(), FEED_POLL_MS);
      this.timer.unref?.();
    });
  }

  private async poll(): Promise<void> {
    const now = Date.now();
    const generation = this.generation;
    let rows: ReceivedEvent[];
    try {
      rows = await eventsSince(await this.db(), now - LOOKBACK_MS);
    } catch (err) {
      // The database restarting: the next tick tries again; tabs keep their stream.
      this.log(`[baton] received events: could not read new events: ${(err as Error).message}`);
      this.release();
      return;
    }
    if (generation !== this.generation) return;
    // The first read after the reader starts only learns what is already there: tabs load the
    // history themselves when their stream opens.
    const announce = this.primed;
    this.primed = true;
    for (const row of rows) {
      if (this.seen.has(row.id)) continue;
      this.seen.set(row.id, row.receivedAt.getTime());
      if (!announce) continue;
      const frame = sseFrame(eventView(row), { event: "received" });
      for (const s of this.subscribers) if (s.receiverIds.has(row.receiverId)) s.send(frame);
    }
    for (const [id, at] of this.seen) if (at < now - 2 * LOOKBACK_MS) this.seen.delete(id);
    this.release();
  }
}

// One reader per process, on globalThis: a production build bundles this module into several
// route chunks (the receiving endpoint nudges it, the stream route subscribes), and both must see it.
const holder = globalThis as typeof globalThis & { __batonReceivedFeed?: ReceivedFeed };
export function receivedFeed(db: () => Promise<Db>): ReceivedFeed {
  return (holder.__batonReceivedFeed ??= new ReceivedFeed(db));
}
