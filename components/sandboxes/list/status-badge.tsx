import { cn } from "../../../lib/utils";
import { Badge } from "../../ui/badge";

/**
 * Tinted backgrounds with the normal text colour: readable in both themes at text-xs (the solid
 * success/destructive badges fall under 4.5:1 with small white text in the light theme).
 */
export const TONE = {
  good: "border-success/60 bg-success/15 text-foreground",
  warn: "border-warning/80 bg-warning/20 text-foreground",
  bad: "border-destructive/60 bg-destructive/15 text-foreground",
  neutral: "border-border bg-muted text-foreground",
  busy: "border-input bg-background text-foreground",
} as const;

const DOT: Record<keyof typeof TONE, string> = {
  good: "bg-success",
  warn: "bg-warning",
  bad: "bg-destructive",
  neutral: "bg-muted-foreground",
  busy: "bg-primary animate-pulse",
};

const STATUS_TONE: Record<string, keyof typeof TONE> = {
  running: "good",
  paused: "warn",
  failed: "bad",
  creating: "busy",
  pausing: "busy",
  resuming: "busy",
  terminated: "neutral",
  expired: "neutral",
};

/** A sandbox's status as the upstream named it (an unknown status is shown as is). */
export function StatusBadge({ status }: { status: string }) {
  const tone = STATUS_TONE[status] ?? "busy";
  return (
    <Badge variant="outline" className={cn("capitalize", TONE[tone])}>
      <span aria-hidden="true" className={cn("size-1.5 rounded-full", DOT[tone])} />
      {status}
    </Badge>
  );
}
