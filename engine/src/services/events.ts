import { EventEmitter } from "node:events";
import type { Db } from "../store/db.js";
import { newId } from "../lib/ids.js";
import { iso } from "../lib/time.js";

export interface EngineEvent {
  seq: number;
  id: string;
  sandbox_id: string | null;
  t: string;
  type: string;
  data: Record<string, unknown>;
}

interface EventRow {
  seq: number;
  id: string;
  sandbox_id: string | null;
  t: number;
  type: string;
  data: string;
}

const toEvent = (r: EventRow): EngineEvent => ({ seq: r.seq, id: r.id, sandbox_id: r.sandbox_id, t: iso(r.t), type: r.type, data: JSON.parse(r.data) as Record<string, unknown> });

/** The activity timeline: every lifecycle change, exec and file write, persisted and fanned out live. */
export class EventLog {
  private bus = new EventEmitter();
  private insert;
  constructor(private db: Db) {
    this.bus.setMaxListeners(0);
    this.insert = db.prepare("INSERT INTO events(id, sandbox_id, t, type, data) VALUES (?, ?, ?, ?, ?)");
  }

  record(sandboxId: string | null, type: string, data: Record<string, unknown> = {}): EngineEvent {
    const id = newId("evt");
    const t = Date.now();
    const info = this.insert.run(id, sandboxId, t, type, JSON.stringify(data));
    const event: EngineEvent = { seq: Number(info.lastInsertRowid), id, sandbox_id: sandboxId, t: iso(t), type, data };
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
