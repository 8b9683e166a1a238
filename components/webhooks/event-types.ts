import { WEBHOOK_EVENT_TYPES } from "../../lib/orkestr/webhook-events";

/**
 * The event types a user picks from: the contract's list (lib/orkestr/webhook-events.ts, the list the
 * engine validates against) without webhook.test, which only "Send test" produces and which reaches
 * a webhook whatever it subscribed to.
 */
export const SUBSCRIBABLE_EVENT_TYPES: readonly string[] = WEBHOOK_EVENT_TYPES.filter((t) => t !== "webhook.test");

/** The types grouped by resource ("sandbox", "template", …), in the contract's order. */
export function groupEventTypes(types: readonly string[] = SUBSCRIBABLE_EVENT_TYPES): [string, string[]][] {
  const groups = new Map<string, string[]>();
  for (const t of types) {
    const resource = t.split(".")[0] ?? t;
    groups.set(resource, [...(groups.get(resource) ?? []), t]);
  }
  return [...groups];
}

/**
 * What the create request sends for a choice: nothing (every event, now and as the list grows) for
 * "all", else the picked types in the contract's order; null when "some" has none picked.
 */
export function eventTypesFor(mode: "all" | "some", picked: ReadonlySet<string>): string[] | undefined | null {
  if (mode === "all") return undefined;
  const list = SUBSCRIBABLE_EVENT_TYPES.filter((t) => picked.has(t));
  return list.length ? list : null;
}

/** A webhook's subscription in words: "All events" when it has every subscribable type. */
export function describeEventTypes(types: readonly string[] | null | undefined): string {
  if (!types || types.length === 0) return "All events";
  const set = new Set(types);
  if (SUBSCRIBABLE_EVENT_TYPES.every((t) => set.has(t))) return "All events";
  return types.join(", ");
}
