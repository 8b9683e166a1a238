import "server-only";
import type { AccessLoss } from "../access-watch";
import type { ActingTeam } from "../acting-team";
import { AppError } from "../errors";
import { upstreamConnection, withUpstream } from "../upstream";
import { HubRegistry, type SandboxHub } from "./sandbox-hub";
import { sessionStreams } from "./session-streams";
import { LIVE_TIMING, sseResponse } from "./sse-response";

// GET /api/v1/sandboxes/{id}/live: a tab's one stream for a sandbox page (see sandbox-hub.ts).

export { LIVE_TIMING };
/** A tab this far behind (bytes queued) is cut off; its EventSource reconnects and catches up. */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;
/** How long a browser waits before reconnecting a dropped stream. */
const RETRY_MS = 3_000;
/**
 * Open live streams one session (a signed-in browser) may hold on this instance (session-streams.ts):
 * far more than a browser opens (Chromium keeps 6 connections per origin over HTTP/1.1), few enough
 * that one session cannot pin the server's sockets. An object so a test can lower it.
 */
export const LIVE_LIMITS = { streamsPerSession: 64 };

const liveStreams = sessionStreams(
  LIVE_LIMITS,
  (open) =>
    new AppError(
      "rate_limited",
      `This browser has ${open} live sandbox views open, the most one sign-in may keep open at once. Close some sandbox tabs; the others keep updating.`,
      { retryAfterSeconds: RETRY_MS / 1000 },
    ),
);

// One registry per process, on globalThis: a production build bundles this module into several
// route chunks, and each must see the same hubs.
const holder = globalThis as typeof globalThis & { __batonLiveHubs?: HubRegistry };
export function liveHubs(): HubRegistry {
  return (holder.__batonLiveHubs ??= new HubRegistry());
}

/** The hub for the acting team's connection and sandbox, after its first read (which may throw). */
async function hubFor(team: ActingTeam | null, sandboxId: string, cursor: string | undefined): Promise<SandboxHub> {
  // No team or no connection: the same refusal as on every proxy route.
  const connection = upstreamConnection(team);
  // The connection's id and last change: a replaced token or base URL is a new hub.
  const key = `${connection.id}:${connection.updatedAt.getTime()}:${sandboxId}`;
  const existing = liveHubs().peek(key);
  if (existing) {
    await existing.ready;
    return existing;
  }
  // The client comes from withUpstream, so a refused token maps as on every proxy route.
  return withUpstream(team, async (orkestr) => {
    const hub = liveHubs().get(key, sandboxId, () => orkestr, cursor);
    await hub.ready;
    return hub;
  });
}

/** The SSE Response of one tab; `cursor` is the last timeline event id it has (Last-Event-ID). */
export async function liveResponse(
  /** The team the request acts in (route()'s `team`): its connection is the one read. */
  team: ActingTeam | null,
  /** The tab's session: the stream cap counts per session. */
  sessionId: string,
  sandboxId: string,
  cursor: string | undefined,
  signal: AbortSignal,
  /**
   * Whether the tab may still read the sandbox (route()'s recheck), asked every few seconds: a
   * sign-out, a disabled user, a removal from the team, a lost role or a removed connection ends
   * the stream, as the next poll of a polling page would have been refused.
   */
  recheck: () => Promise<AccessLoss | null>,
): Promise<Response> {
  const uncount = liveStreams.open(sessionId);
  let hub: SandboxHub;
  try {
    hub = await hubFor(team, sandboxId, cursor);
  } catch (e) {
    uncount();
    throw e;
  }
  return sseResponse(
    { start: (send, end) => hub.subscribe({ send, end }, cursor), onClose: uncount },
    { signal, recheck, retryMs: RETRY_MS, maxQueuedBytes: MAX_QUEUED_BYTES },
  );
}
