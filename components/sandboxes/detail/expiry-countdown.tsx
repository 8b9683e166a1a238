"use client";

import { formatClock, formatDuration, toMs, type WireTime } from "../../../lib/format";
import { useNow } from "../../../lib/use-now";

/** "terminates in 4m 05s" (or "pauses in"), ticking; nothing without an expiry. */
export function ExpiryCountdown({ expiresAt, onTimeout }: { expiresAt: WireTime; onTimeout: string }) {
  const now = useNow();
  const at = toMs(expiresAt);
  if (at === null) return <span>no countdown</span>;
  const verb = onTimeout === "pause" ? "pauses" : "terminates";
  if (now === null)
    return (
      <span>
        {verb} at {formatClock(at)}
      </span>
    );
  const left = at - now;
  return <span data-testid="expiry-countdown">{left > 0 ? `${verb} in ${formatDuration(left)}` : `${verb} now`}</span>;
}
