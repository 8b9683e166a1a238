/**
 * Which queued template build runs next, and in which slot (services/templates.ts). Builds used to
 * run one at a time, first come first served: one account's hour-long build held every other
 * account's in `queued`. Now several slots run at once and one account holds at most
 * `perAccount` of them, so another account's build starts as soon as any slot is free, whatever
 * the first account has queued. Among the builds that may start, the oldest goes first.
 */
export interface SlotHolder {
  account: string;
  slot: number;
}

/** The lowest free slot of `slots`, or null when every slot is busy. */
export function freeSlot(slots: number, running: Iterable<SlotHolder>): number | null {
  const busy = new Set([...running].map((r) => r.slot));
  for (let slot = 0; slot < slots; slot++) if (!busy.has(slot)) return slot;
  return null;
}

/**
 * The oldest queued build whose account is under its limit, and the queue without it (and
 * without ids `row` no longer finds: deleted or already started). An account at its limit keeps
 * its place: its builds start when one of its own finishes.
 */
export function nextBuild<R extends { id: string; account_id: string }>(
  queue: readonly string[],
  opts: { running: readonly SlotHolder[]; perAccount: number; row: (id: string) => R | undefined },
): { row: R | null; queue: string[] } {
  const held = new Map<string, number>();
  for (const r of opts.running) held.set(r.account, (held.get(r.account) ?? 0) + 1);
  const kept: string[] = [];
  let chosen: R | null = null;
  for (const id of queue) {
    if (chosen) {
      kept.push(id);
      continue;
    }
    const row = opts.row(id);
    if (!row) continue;
    if ((held.get(row.account_id) ?? 0) >= opts.perAccount) kept.push(id);
    else chosen = row;
  }
  return { row: chosen, queue: kept };
}
