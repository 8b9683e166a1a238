import { EventEmitter } from "node:events";
import type { Db } from "../store/db.js";
import { newId } from "../lib/ids.js";
import { iso } from "../lib/time.js";

export interface EngineEvent {
  seq: number;
  id: string;
  /** The account the event belongs to: only its webhooks and its followers see it. */
  account_id: string;
  sandbox_id: string | null;
  t: string;
  type: string;
  data: Record<string, unknown>;
}

interface EventRow {
  seq: number;
  id: string;
  account_id: string;
  sandbox_id: string | null;
  t: number;
  type: string;
  data: string;
}

const toEvent = (r: EventRow): EngineEvent => ({
  seq: r.seq,
  id: r.id,
  account_id: r.account_id,
  sandbox_id: r.sandbox_id,
  t: iso(r.t),
  type: r.type,
  data: JSON.parse(r.data) as Record<string, unknown>,
});

/** The activity timeline: every lifecycle change, exec and file write, persisted and fanned out live. */
export class EventLog {
  private bus = new EventEmitter();
  private insert;
  private accountOfSandbox;
  constructor(private db: Db) {
    this.bus.setMaxListeners(0);
    this.insert = db.prepare("INSERT INTO events(id, account_id, sandbox_id, t, type, data) VALUES (?, ?, ?, ?, ?, ?)");
    this.accountOfSandbox = db.prepare("SELECT account_id FROM sandboxes WHERE id = ?").pluck();
  }

  /** An event of a sandbox; it belongs to the sandbox's account. */
  record(sandboxId: string, type: string, data: Record<string, unknown> = {}): EngineEvent {
    const account = this.accountOfSandbox.get(sandboxId) as string | undefined;
    if (!account) throw new Error(`event ${type}: sandbox ${sandboxId} does not exist`);
    return this.write(account, sandboxId, type, data);
  }

  /** An event of an account that concerns no one sandbox (volumes, templates). */
  recordFor(account: string, type: string, data: Record<string, unknown> = {}): EngineEvent {
    return this.write(account, null, type, data);
  }

  private write(account: string, sandboxId: string | null, type: string, data: Record<string, unknown>): EngineEvent {
    const id = newId("evt");
    const t = Date.now();
    const info = this.insert.run(id, account, sandboxId, t, type, JSON.stringify(data));
    const event: EngineEvent = {
      seq: Number(info.lastInsertRowid),
      id,
      account_id: account,
      sandbox_id: sandboxId,
      t: iso(t),
      type,
      data,
    };
    this.bus.emit("event", event);
    return event;
  }

  /** Oldest first, after `afterSeq`. */
  list(sandboxId: string, opts: { afterSeq: number; limit: number; types?: string[] }): EngineEvent[] {
    const types = opts.types?.length ? ` AND type IN (${opts.types.map(() => "?").join(",")})` : "";
    const rows = this.db
      .prepare(`SELECT * FROM events WHERE sandbox_id = ? AND seq > ?${types} ORDER BY seq LIMIT ?`)
      .all(sandboxId, opts.afterSeq, ...(opts.types ?? []), opts.limit) as EventRow[];
    return rows.map(toEvent);
  }

  subscribe(listener: (e: EngineEvent) => void): () => void {
    this.bus.on("event", listener);
    return () => this.bus.off("event", listener);
  }
}
