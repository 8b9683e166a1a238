"use client";

import { useEffect, useState } from "react";
import type { SandboxEvent } from "../../../lib/orkestr/schemas/events";
import { asOrkestrError, OrkestrError } from "../../../lib/orkestr/errors";
import { EVENTS_MAX, EVENTS_POLL_MS, fetchAllEvents } from "../../../lib/queries/events";
import { subscribeLive } from "../../../lib/queries/sandbox-live";

/** How the timeline stays current: the SSE follow stream, or polling when a server has none. */
export type FollowMode = "loading" | "live" | "reconnecting" | "polling" | "paused" | "ended";

/** Events after which a sandbox has no more history. */
const ENDING_EVENTS = new Set(["sandbox.terminated", "sandbox.expired", "sandbox.failed"]);
/** A gone sandbox whose ending event is not in yet is read again this often, this many times. */
const FINAL_READ_RETRY_MS = 1_000;
const FINAL_READS = 5;

function keyOf(e: SandboxEvent): string {
  return e.id ?? `${String(e.t ?? e.created_at)}|${e.type}|${JSON.stringify(e.data)}`;
}

/** Adds events not seen yet; oldest first, at most EVENTS_MAX (the newest kept). */
function merge(list: SandboxEvent[], incoming: SandboxEvent[]): SandboxEvent[] {
  const seen = new Set(list.map(keyOf));
  const added = incoming.filter((e) => {
    const k = keyOf(e);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  if (!added.length) return list;
  return [...list, ...added].slice(-EVENTS_MAX);
}

/**
 * The activity timeline, live: the backlog from the paged events endpoint, then the page's live
 * stream (GET /api/v1/sandboxes/{id}/live, lib/queries/sandbox-live.ts), resumed from the last event
 * id after a drop. A server without the stream is polled every EVENTS_POLL_MS instead. Either stops
 * while the browser tab is hidden, and for a sandbox that is gone (after one last read).
 */
export function useSandboxEvents(
  id: string,
  active: boolean,
): { events: SandboxEvent[]; mode: FollowMode; error: OrkestrError | null } {
  const [events, setEvents] = useState<SandboxEvent[]>([]);
  const [mode, setMode] = useState<FollowMode>("loading");
  const [error, setError] = useState<OrkestrError | null>(null);

  useEffect(() => {
    let cancelled = false;
    let unsubscribeLive: (() => void) | null = null;
    let pollTimer: ReturnType<typeof setTimeout> | null = null;
    let polling = false;
    const controller = new AbortController();

    const add = (incoming: SandboxEvent[]) => {
      if (!cancelled && incoming.length) setEvents((list) => merge(list, incoming));
    };
    /** The whole backlog, merged in; null when it could not be read. */
    const readAll = async (): Promise<SandboxEvent[] | null> => {
      try {
        const all = await fetchAllEvents(id, controller.signal);
        add(all);
        setError(null);
        return all;
      } catch (err) {
        if (cancelled || controller.signal.aborted) return null;
        setError(asOrkestrError(err));
        return null;
      }
    };
    const stop = () => {
      unsubscribeLive?.();
      unsubscribeLive = null;
      if (pollTimer) clearTimeout(pollTimer);
      pollTimer = null;
    };
    const poll = async () => {
      pollTimer = null;
      if (cancelled || document.hidden) return;
      await readAll();
      if (!cancelled && !document.hidden) pollTimer = setTimeout(poll, EVENTS_POLL_MS);
    };
    const follow = () => {
      if (cancelled || document.hidden) return;
      if (polling) {
        setMode("polling");
        void poll();
        return;
      }
      // The page's live stream (shared with the sandbox and metrics hooks), which resumes after
      // the last event id by itself after a drop.
      const unsubscribe = subscribeLive(id, {
        state: (s) => {
          if (s === "live") {
            setMode("live");
            setError(null);
          } else if (s === "reconnecting") setMode("reconnecting");
          else if (s === "failed") {
            // The server refused the stream (an error status or no such route): poll instead.
            unsubscribeLive?.();
            unsubscribeLive = null;
            polling = true;
            setMode("polling");
            void poll();
          } else if (s === "ended") setMode("ended");
        },
        event: (event) => add([event]),
        eventsError: (p) => setError(new OrkestrError({ status: p.status, code: p.code, detail: p.detail })),
      });
      // The stream may have failed already (another hook of the page found out): then it polls.
      if (polling) unsubscribe();
      else unsubscribeLive = unsubscribe;
    };
    const onVisibility = () => {
      if (document.hidden) {
        stop();
        setMode("paused");
      } else if (!unsubscribeLive && !pollTimer && active) {
        setMode(polling ? "polling" : "reconnecting");
        follow();
      }
    };

    void (async () => {
      let all = await readAll();
      if (cancelled) return;
      if (!active) {
        // The status can say "gone" before the history does: an optimistic terminate flips it
        // before the request lands. Read again until the ending event is in (a few times at most).
        for (let i = 0; i < FINAL_READS && !all?.some((e) => ENDING_EVENTS.has(e.type)); i++) {
          await new Promise((r) => setTimeout(r, FINAL_READ_RETRY_MS));
          if (cancelled) return;
          all = await readAll();
          if (cancelled) return;
        }
        setMode("ended");
        return;
      }
      if (!all) polling = false; // still try the stream: it may work where the page did not
      document.addEventListener("visibilitychange", onVisibility);
      follow();
    })();

    return () => {
      cancelled = true;
      controller.abort();
      stop();
      document.removeEventListener("visibilitychange", onVisibility);
    };
  }, [id, active]);

  return { events, mode, error };
}
