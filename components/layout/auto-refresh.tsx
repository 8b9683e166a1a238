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
/** Where a reloading page keeps its attempt count, so the back-off goes on across loads (per tab). */
const RELOAD_ATTEMPT_KEY = "baton:outage-reload";

/** The attempts of this tab's previous loads, if the last one reloaded within a back-off's reach. */
function reloadAttempt(): number {
  try {
    const [attempt, at] = (sessionStorage.getItem(RELOAD_ATTEMPT_KEY) ?? "").split(":").map(Number);
    return attempt !== undefined && at !== undefined && Date.now() - at < 2 * CAP_MS ? attempt : 0;
  } catch {
    return 0;
  }
}

/**
 * A server-rendered page whose data could not be read for a temporary reason: counts down and asks
 * the server again (router.refresh(): the page's server parts re-render in place, no reload), backing
 * off from `retryAfterSeconds` (or 3 s) to 30 s. When the data comes back the page simply renders it.
 */
export function AutoRefresh({
  retryAfterSeconds,
  reload = false,
}: {
  retryAfterSeconds?: number | null;
  /**
   * Ask again with a new page load instead: for a page whose URL must first be redirected (a
   * console URL without `?team=`, which the server answers with the default team's URL). An
   * in-place refresh does not follow a redirect, and a page showing only an outage has nothing
   * a reload could lose.
   */
  reload?: boolean;
}) {
  const router = useTeamRouter();
  const [attempt, setAttempt] = useState(() => (reload ? reloadAttempt() : 0));
  const [deadline, setDeadline] = useState<number | null>(null);
  const [pending, startTransition] = useTransition();
  const now = useNow();
  const first = retryAfterSeconds && retryAfterSeconds > 0 ? retryAfterSeconds * 1000 : FIRST_MS;
  // The next try is scheduled from the page's clock once the previous one is over (adjusting state
  // during render, as React recommends over an effect).
  if (!pending && deadline === null && now !== null) setDeadline(now + Math.min(first * 2 ** attempt, CAP_MS));
  const refresh = () => {
    setDeadline(null);
    if (reload) {
      try {
        sessionStorage.setItem(RELOAD_ATTEMPT_KEY, `${attempt + 1}:${Date.now()}`);
      } catch {
        // Storage refused (private mode): the back-off starts over on the next load.
      }
      window.location.reload();
    } else startTransition(() => router.refresh());
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
