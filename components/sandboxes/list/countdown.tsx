"use client";

import { formatAgo, formatDuration, formatUtc, toMs } from "../../../lib/format";
import { useNow } from "../../../lib/use-now";
import { isFinished } from "../../../lib/sandbox-status";

/** "in 4m 05s" until a sandbox's expiry, live; what a paused or finished sandbox means instead. */
export function ExpiresCell({ status, expiresAt }: { status: string; expiresAt: unknown }) {
  const now = useNow();
  const at = toMs(expiresAt);
  if (isFinished(status)) return <span className="text-muted-foreground">—</span>;
  if (at === null) return <span className="text-muted-foreground">{status === "paused" ? "on hold" : "—"}</span>;
  if (now === null) return <time dateTime={new Date(at).toISOString()}>…</time>;
  const left = at - now;
  return (
    <time
      dateTime={new Date(at).toISOString()}
      title={`Expires ${formatUtc(at)}`}
      className={left < 60_000 ? "font-medium text-destructive" : undefined}
    >
      {left > 0 ? `in ${formatDuration(left)}` : "now"}
    </time>
  );
}

/** "5m ago", with the exact time as a tooltip. */
export function CreatedCell({ createdAt }: { createdAt: unknown }) {
  const now = useNow();
  const at = toMs(createdAt);
  if (at === null) return <span className="text-muted-foreground">—</span>;
  return (
    <time dateTime={new Date(at).toISOString()} title={formatUtc(at)}>
      {now === null ? "…" : formatAgo(now - at)}
    </time>
  );
}
