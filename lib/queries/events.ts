import { apiAll, apiPage, withPageTeam } from "../api/core";
import { object } from "../api/read";
import { buildQuery, path } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { Page } from "../orkestr/schemas/common";
import type { SandboxEvent } from "../orkestr/schemas/events";

// A sandbox's activity events (GET /api/v1/sandboxes/{id}/events): the detail page's timeline reads
// the backlog and then follows the SSE stream; the list's telemetry reads the exec events of rows on
// screen. Both are long-lived loops of their own (components/sandboxes/detail/use-sandbox-events.ts,
// components/sandboxes/list/row-telemetry.ts), not TanStack queries, so there is no key factory here.

/** How often the timeline re-reads its first pages when the live stream is not available. */
export const EVENTS_POLL_MS = 5_000;
/** Most events the timeline keeps in memory (newest kept). */
export const EVENTS_MAX = 2_000;

/** An event: its `type` is what the UI dispatches on; `data` is always an object (the server's schema makes it one). */
export const readEvent = object<SandboxEvent>({ type: "string" }, { id: "string", data: "object" });

const eventsPath = (id: string) => path`/api/v1/sandboxes/${id}/events`;

/** The timeline from the start (oldest first, as the API pages it), bounded to EVENTS_MAX. */
export async function fetchAllEvents(id: string, signal?: AbortSignal): Promise<SandboxEvent[]> {
  const all = await apiAll({ path: eventsPath(id), signal }, readEvent, { maxPages: 20 });
  return all.slice(-EVENTS_MAX);
}

/** One page of a sandbox's exec events (oldest first), after `cursor`. */
export function fetchExecEvents(id: string, cursor: string | null, signal?: AbortSignal): Promise<Page<SandboxEvent>> {
  return apiPage(
    { path: eventsPath(id), query: { type: "exec,exec.stream", limit: 500, cursor: cursor ?? undefined }, signal },
    readEvent,
  );
}

/** The URL of the live timeline (SSE through the proxy route, which resumes after `cursor`), for EventSource. */
export function eventsFollowUrl(id: string, cursor?: string | null): string {
  return withPageTeam(`${eventsPath(id)}${buildQuery({ follow: true, cursor: cursor || undefined })}`);
}
