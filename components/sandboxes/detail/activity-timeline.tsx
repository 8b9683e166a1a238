"use client";

import { useState } from "react";
import { cn } from "../../../lib/utils";
import { Alert, AlertDescription } from "../../ui/alert";
import { Badge } from "../../ui/badge";
import { Button } from "../../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { Skeleton } from "../../ui/skeleton";
import { describeEvent, type EventCategory } from "./describe-event";
import { formatDateTime } from "../../../lib/format";
import { useSandbox } from "./sandbox-context";
import { useSandboxEvents, type FollowMode } from "./use-sandbox-events";
import { isFinished } from "../../../lib/sandbox-status";

const FILTERS: { id: EventCategory | "all"; label: string }[] = [
  { id: "all", label: "All" },
  { id: "lifecycle", label: "Lifecycle" },
  { id: "exec", label: "Commands" },
  { id: "file", label: "Files" },
];

const MODE_TEXT: Record<FollowMode, string> = {
  loading: "Loading…",
  live: "Live: new events arrive as they happen (server-sent events).",
  reconnecting: "Reconnecting to the live stream…",
  polling: "Refreshing every 5 s (this server has no live stream).",
  paused: "Paused while this tab is hidden.",
  ended: "The sandbox is gone: this is its final history.",
};

const CATEGORY_LABEL: Record<EventCategory, string> = {
  lifecycle: "lifecycle",
  exec: "command",
  file: "file",
  other: "event",
};

/** Lines shown at first; "Show more" adds this many. */
const PAGE = 100;

/** The Activity tab: every lifecycle change, command and file write, newest first, live. */
export function ActivityTimeline() {
  const { data: sandbox } = useSandbox();
  const active = !isFinished(sandbox.status);
  const { events, mode, error } = useSandboxEvents(sandbox.id, active);
  const [filter, setFilter] = useState<EventCategory | "all">("all");
  const [shown, setShown] = useState(PAGE);
  const described = events
    .map((e) => ({ e, d: describeEvent(e) }))
    .filter(({ d }) => filter === "all" || d.category === filter)
    .reverse();

  return (
    <Card>
      <CardHeader>
        <CardTitle>Activity</CardTitle>
        <CardDescription data-testid="timeline-mode">{MODE_TEXT[mode]}</CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-4">
        <div role="group" aria-label="Show" className="flex flex-wrap gap-2">
          {FILTERS.map((f) => (
            <Button
              key={f.id}
              size="sm"
              variant={filter === f.id ? "default" : "outline"}
              aria-pressed={filter === f.id}
              onClick={() => setFilter(f.id)}
            >
              {f.label}
            </Button>
          ))}
        </div>
        {error ? (
          <Alert variant="warning" role="status">
            <AlertDescription className="text-foreground">
              The timeline could not be read: {error.detail}
            </AlertDescription>
          </Alert>
        ) : null}
        {mode === "loading" && events.length === 0 ? (
          <div className="flex flex-col gap-2" aria-hidden="true">
            <Skeleton className="h-10 w-full" />
            <Skeleton className="h-10 w-full" />
          </div>
        ) : described.length === 0 ? (
          <p className="text-sm text-muted-foreground">
            {filter === "all" ? "No activity yet." : "Nothing of this kind yet."}
          </p>
        ) : (
          <ol
            aria-label="Events, newest first"
            data-testid="timeline"
            className="flex flex-col divide-y rounded-md border"
          >
            {described.slice(0, shown).map(({ e, d }, i) => (
              <li
                key={e.id ?? `${i}-${String(e.t)}`}
                data-event-type={e.type}
                className="flex flex-col gap-1 px-3 py-2 sm:flex-row sm:items-baseline sm:gap-3"
              >
                <time
                  className="shrink-0 font-mono text-xs text-muted-foreground tabular-nums"
                  dateTime={typeof e.t === "string" ? e.t : undefined}
                >
                  {formatDateTime(e.t ?? e.created_at)}
                </time>
                <Badge variant={d.failed ? "destructive" : "outline"} className="w-fit shrink-0">
                  {CATEGORY_LABEL[d.category]}
                </Badge>
                <div className="flex min-w-0 flex-col">
                  <span className={cn("text-sm break-all", d.category === "exec" && "font-mono")}>{d.title}</span>
                  {d.detail ? <span className="text-xs text-muted-foreground">{d.detail}</span> : null}
                </div>
              </li>
            ))}
          </ol>
        )}
        {described.length > shown ? (
          <div>
            <Button variant="outline" size="sm" onClick={() => setShown((n) => n + PAGE)}>
              Show {Math.min(PAGE, described.length - shown)} more
            </Button>
          </div>
        ) : null}
      </CardContent>
    </Card>
  );
}
