"use client";

import { useEffect, useState } from "react";
import { asOrkestrError, type OrkestrError } from "../../../lib/orkestr/errors";
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
 * Polls GET /api/v1/sandboxes/{id}/metrics at the server's sample_interval_seconds with `since=`
 * the newest sample, and accumulates the answers. Polling stops while the browser tab is hidden and
 * resumes at once when it is shown; it stops for good once the sandbox is gone (after one last read
 * for the lifetime totals).
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

    const schedule = (ms: number) => {
      if (cancelled || document.hidden) return;
      timer = setTimeout(poll, ms);
    };
    const poll = async () => {
      timer = null;
      if (cancelled || document.hidden) return;
      controller = new AbortController();
      const since = sinceParam(current.since);
      try {
        const m = await fetchSandboxMetrics(id, since ?? undefined, controller.signal);
        if (cancelled) return;
        current = mergeMetrics(current, m, Date.now());
        store.set(id, current);
        setHistory(current);
        failures = 0;
        setError(null);
        if (!isFinished(m.sandbox_status ?? "")) schedule(pollDelayMs(current));
      } catch (err) {
        if (cancelled || controller.signal.aborted) return;
        failures += 1;
        if (failures >= ERRORS_BEFORE_SHOWN) setError(asOrkestrError(err));
        // Back off on errors, up to 30 s.
        schedule(Math.min(30_000, pollDelayMs(current) * 2 ** failures));
      }
    };
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
      if (timer) clearTimeout(timer);
      controller?.abort();
      document.removeEventListener("visibilitychange", onVisibility);
    };
    // `status` restarts the loop: after resume (polling again) and after terminate (one last read).
  }, [id, status]);

  return { history, error };
}
