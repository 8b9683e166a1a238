"use client";

import { useState, useTransition } from "react";
import { useNow } from "../../lib/use-now";
import { retryText } from "./retry-text";
import { useCountdown } from "../sandboxes/create/use-countdown";
import { Button } from "../ui/button";
import { useTeamRouter } from "./team-link";

/** First wait, and the cap: the server said when (Retry-After) or an engine restart takes a few seconds. */
const FIRST_MS = 3_000;
const CAP_MS = 30_000;

/**
 * A server-rendered page whose data could not be read for a temporary reason: counts down and asks
 * the server again (router.refresh(): the page's server parts re-render in place, no reload), backing
 * off from `retryAfterSeconds` (or 3 s) to 30 s. When the data comes back the page simply renders it.
 */
export function AutoRefresh({ retryAfterSeconds }: { retryAfterSeconds?: number | null }) {
  const router = useTeamRouter();
  const [attempt, setAttempt] = useState(0);
  const [deadline, setDeadline] = useState<number | null>(null);
  const [pending, startTransition] = useTransition();
  const now = useNow();
  const first = retryAfterSeconds && retryAfterSeconds > 0 ? retryAfterSeconds * 1000 : FIRST_MS;
  // The next try is scheduled from the page's clock once the previous one is over (adjusting state
  // during render, as React recommends over an effect).
  if (!pending && deadline === null && now !== null) setDeadline(now + Math.min(first * 2 ** attempt, CAP_MS));
  const refresh = () => {
    setDeadline(null);
    startTransition(() => router.refresh());
    setAttempt((a) => a + 1);
  };
  const secondsLeft = useCountdown(pending ? null : deadline, refresh);
  return (
    <span className="flex flex-wrap items-center gap-3">
      <span role="timer" aria-live="off" className="font-medium">
        {pending ? "Retrying now…" : retryText(secondsLeft, attempt + 1)}
      </span>
      <Button size="sm" variant="outline" onClick={refresh} disabled={pending}>
        Retry now
      </Button>
    </span>
  );
}
