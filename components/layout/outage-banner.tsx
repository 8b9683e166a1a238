"use client";

import { useQueryClient, type Query } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { errorText } from "../../lib/orkestr/errors";
import { formatClock, formatDuration } from "../../lib/format";
import { connectionKeys } from "../../lib/queries/connections";
import { isTransient, retryDueAt } from "../../lib/queries/retry";
import { useNow } from "../../lib/use-now";
import { Button } from "../ui/button";

// The console-wide outage banner: while any read on the page keeps failing with a transient error
// (the orkestr API down or restarting, the Baton server or its database unreachable), one line under
// the header says what is down, since when, and when the next retry is. It is computed from the
// query cache, so it costs no request of its own, covers every page (also those without a notice of
// their own), and goes away by itself once the reads answer again: no reload.

type Kind = "engine" | "baton" | "database" | "other";

interface Outage {
  kind: Kind;
  detail: string;
  /** When the first of the failing reads started failing (ms since the epoch). */
  since: number;
  /** The soonest retry due among them. */
  nextAt: number | null;
}

function kindOf(error: unknown): Kind {
  const e = error as { status?: number; code?: string };
  if (e.code === "database_unavailable") return "database";
  // The browser core's own "no answer": the Baton server itself is down or the network is.
  if (e.status === 0) return "baton";
  if (e.code === "upstream_unreachable" || e.code === "upstream_reset" || e.code === "timeout") return "engine";
  if (e.status === 502 || e.status === 504) return "engine";
  return "other";
}

const TITLE: Record<Kind, string> = {
  engine: "The orkestr API is not answering",
  baton: "The Baton server is not answering",
  database: "The Baton database is unavailable",
  other: "Some data on this page could not be loaded",
};

/** The failure a query is retrying after, if it is transient and the query is on screen. */
function failureOf(query: Query): unknown {
  if (query.getObserversCount() === 0) return null;
  const reason = query.state.fetchFailureReason;
  return query.state.fetchFailureCount > 0 && reason && isTransient(reason) ? reason : null;
}

export function OutageBanner() {
  const queryClient = useQueryClient();
  const [outage, setOutage] = useState<Outage | null>(null);
  const now = useNow();

  useEffect(() => {
    const cache = queryClient.getQueryCache();
    // When each failing query was first seen failing; forgotten once it answers.
    const firstSeen = new Map<string, number>();
    const update = () => {
      let worst: Outage | null = null;
      const failing = new Set<string>();
      for (const query of cache.getAll()) {
        const error = failureOf(query);
        if (!error) continue;
        failing.add(query.queryHash);
        if (!firstSeen.has(query.queryHash)) firstSeen.set(query.queryHash, Date.now());
        const since = firstSeen.get(query.queryHash)!;
        const due = retryDueAt(error);
        const kind = kindOf(error);
        if (!worst) {
          worst = { kind, detail: errorText(error), since, nextAt: due };
          continue;
        }
        // The most specific cause wins the wording; the earliest start and the soonest retry win the times.
        if (worst.kind === "other" && kind !== "other") worst = { ...worst, kind, detail: errorText(error) };
        worst.since = Math.min(worst.since, since);
        if (due !== null) worst.nextAt = worst.nextAt === null ? due : Math.min(worst.nextAt, due);
      }
      for (const hash of [...firstSeen.keys()]) if (!failing.has(hash)) firstSeen.delete(hash);
      setOutage((previous) =>
        previous === null && worst === null
          ? previous
          : previous && worst && JSON.stringify(previous) === JSON.stringify(worst)
            ? previous
            : worst,
      );
    };
    update();
    return cache.subscribe(update);
  }, [queryClient]);

  // The header's connection indicator checks the orkestr API only every 30 s: when the API stops (or
  // starts again) answering the page's reads, it checks at once, so it never says "Connected" beside
  // a banner saying the API is not answering.
  const engineDown = outage?.kind === "engine";
  useEffect(() => {
    if (!engineDown) return;
    const checkNow = () => void queryClient.invalidateQueries({ queryKey: connectionKeys.status(), exact: true });
    checkNow();
    // Again once it answers (the banner goes away then).
    return checkNow;
  }, [engineDown, queryClient]);

  if (!outage) return null;
  // Cancel the waiting retries and ask again at once (a refetch alone would join a waiting retry).
  const retryNow = () => {
    const failing = queryClient
      .getQueryCache()
      .getAll()
      .filter((q) => failureOf(q) !== null);
    void Promise.all(failing.map((q) => queryClient.cancelQueries({ queryKey: q.queryKey, exact: true }))).then(() =>
      Promise.all(failing.map((q) => queryClient.refetchQueries({ queryKey: q.queryKey, exact: true }))),
    );
  };
  const secondsLeft =
    outage.nextAt === null || now === null ? null : Math.max(0, Math.ceil((outage.nextAt - now) / 1000));
  return (
    <div
      role="status"
      data-testid="outage-banner"
      data-kind={outage.kind}
      className="border-b border-warning/60 bg-warning/15 px-4 py-2 text-sm text-foreground md:px-8"
    >
      <div className="mx-auto flex max-w-6xl flex-wrap items-center gap-x-3 gap-y-1">
        <p className="font-medium">
          {TITLE[outage.kind]} since {formatClock(outage.since)}
          {now !== null && now - outage.since >= 1_000 ? ` (${formatDuration(now - outage.since)})` : ""}.
        </p>
        <p className="min-w-0 flex-1 text-muted-foreground">{outage.detail}</p>
        <p role="timer" aria-live="off" className="whitespace-nowrap">
          {secondsLeft === null ? "Retrying…" : secondsLeft > 0 ? `Retrying in ${secondsLeft} s` : "Retrying now…"}
        </p>
        <Button size="sm" variant="outline" onClick={retryNow}>
          Retry now
        </Button>
      </div>
    </div>
  );
}
