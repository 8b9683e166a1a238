"use client";

import { useEffect, useState } from "react";
import { asOrkestrError, OrkestrError } from "../../../lib/orkestr/errors";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { Metrics } from "../../../lib/orkestr/schemas/metrics";
import { subscribeLive } from "../../../lib/queries/sandbox-live";
import { fetchSandboxMetrics } from "../../../lib/queries/sandboxes";
import { emptyHistory, mergeMetrics, pollDelayMs, sinceParam, type MetricsHistory } from "./metrics-history";
import { isFinished } from "../../../lib/sandbox-status";

/**
 * Histories by sandbox id for the browser tab's life: switching to the Terminal tab and back keeps
 * the accumulated chart (the next poll's `since` fills what happened meanwhile).
 */
const store = new Map<string, MetricsHistory>();

/** After this many failed polls in a row the error is shown (a single blip is not). */
const ERRORS_BEFORE_SHOWN = 2;

/**
 * Reads GET /api/v1/sandboxes/{id}/metrics once (the history so far), then takes each further read
 * from the page's live stream (lib/queries/sandbox-live.ts), which the console makes once for every
 * tab watching the sandbox. While the stream is not live it polls instead, at the server's
 * sample_interval_seconds with `since=` the newest sample. Either stops while the browser tab is
 * hidden and resumes at once when it is shown; polling stops for good once the sandbox is gone
 * (after one last read for the lifetime totals).
 */
export function useMetricsHistory(id: string, status: string): { history: MetricsHistory; error: OrkestrError | null } {
  const [history, setHistory] = useState<MetricsHistory>(() => store.get(id) ?? emptyHistory());
  const [error, setError] = useState<OrkestrError | null>(null);

  useEffect(() => {
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    let controller: AbortController | null = null;
    let failures = 0;
    let current = store.get(id) ?? emptyHistory();
    let live = false;
    /** The first read is in: pushes merge after it (before it they would set `since` past the history). */
    let read = false;
    let done = false;

    const schedule = (ms: number) => {
      if (cancelled || done || live || document.hidden) return;
      timer = setTimeout(poll, ms);
    };
    const apply = (m: Metrics) => {
      current = mergeMetrics(current, m, Date.now());
      store.set(id, current);
      setHistory(current);
      failures = 0;
      setError(null);
      if (isFinished(m.sandbox_status ?? "")) done = true;
    };
    const failed = (err: unknown) => {
      failures += 1;
      if (failures >= ERRORS_BEFORE_SHOWN) setError(asOrkestrError(err));
    };
    const poll = async () => {
      timer = null;
      if (cancelled || document.hidden) return;
      controller = new AbortController();
      const since = sinceParam(current.since);
      try {
        const m = await fetchSandboxMetrics(id, since ?? undefined, controller.signal);
        if (cancelled) return;
        read = true;
        apply(m);
        schedule(pollDelayMs(current));
      } catch (err) {
        if (cancelled || controller.signal.aborted) return;
        failed(err);
        // Back off on errors, up to 30 s.
        schedule(Math.min(30_000, pollDelayMs(current) * 2 ** failures));
      }
    };
    const unsubscribe = isFinished(status)
      ? () => {}
      : subscribeLive(id, {
          state: (s) => {
            live = s === "live";
            if (live && timer) {
              clearTimeout(timer);
              timer = null;
            } else if (!live && read && !timer && !cancelled) schedule(0); // fills the gap, then polls
          },
          metrics: (m) => {
            if (!cancelled && read && !document.hidden) apply(m);
          },
          metricsError: (p) => {
            if (!cancelled) failed(new OrkestrError({ status: p.status, code: p.code, detail: p.detail }));
          },
        });
    const onVisibility = () => {
      if (document.hidden) {
        if (timer) clearTimeout(timer);
        timer = null;
        controller?.abort();
      } else if (!timer) {
        void poll();
      }
    };
    document.addEventListener("visibilitychange", onVisibility);
    void poll();
    return () => {
      cancelled = true;
      unsubscribe();
      if (timer) clearTimeout(timer);
      controller?.abort();
      document.removeEventListener("visibilitychange", onVisibility);
    };
    // `status` restarts the loop: after resume (polling again) and after terminate (one last read).
  }, [id, status]);

  return { history, error };
}
