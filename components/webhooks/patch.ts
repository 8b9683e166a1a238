import { SUBSCRIBABLE_EVENT_TYPES } from "./event-types";
import type { WebhookFormValues } from "./webhook-form";

export interface WebhookPatch {
  url?: string;
  event_types?: string[];
  description?: string;
}

const sameSet = (a: readonly string[], b: readonly string[]) => {
  const s = new Set(a);
  return new Set(b).size === s.size && b.every((x) => s.has(x));
};

/**
 * The PATCH for an edit: only the fields that changed. "All events" is sent as the whole list (on
 * PATCH an absent event_types means "unchanged", not "all"); a cleared description as "".
 */
export function webhookPatch(
  current: { url?: string | null; event_types?: readonly string[] | null; description?: string | null },
  values: WebhookFormValues,
): WebhookPatch {
  const patch: WebhookPatch = {};
  if (values.url !== (current.url ?? "")) patch.url = values.url;
  const types = values.event_types ?? [...SUBSCRIBABLE_EVENT_TYPES];
  if (!sameSet(types, current.event_types ?? [])) patch.event_types = types;
  const description = values.description ?? "";
  if (description !== (current.description ?? "")) patch.description = description;
  return patch;
}
