import { cn } from "../../lib/utils";
import type { SnapshotCap } from "./snapshot-facts";

/** Named snapshots used / cap, as words and a bar (a meter for assistive technology). */
export function CapMeter({ cap, className }: { cap: SnapshotCap; className?: string }) {
  if (cap.used === null) return null;
  const label = cap.cap === null ? `${cap.used} named snapshots (no cap named)` : `${cap.used} / ${cap.cap}`;
  const ratio = cap.cap ? Math.min(1, cap.used / cap.cap) : 0;
  return (
    <div className={cn("flex min-w-48 flex-col gap-1", className)} data-testid="snapshot-cap">
      <div className="flex items-baseline justify-between gap-3 text-sm">
        <span className="text-muted-foreground">Named snapshots</span>
        <span className={cn("font-medium tabular-nums", cap.full && "text-destructive")}>{label}</span>
      </div>
      {cap.cap !== null ? (
        <div
          role="meter"
          aria-label="Named snapshots used"
          aria-valuemin={0}
          aria-valuemax={cap.cap}
          aria-valuenow={cap.used}
          aria-valuetext={`${cap.used} of ${cap.cap}`}
          className="h-1.5 overflow-hidden rounded-full bg-muted"
        >
          <div
            className={cn("h-full rounded-full", cap.full ? "bg-destructive" : "bg-primary")}
            style={{ width: `${ratio * 100}%` }}
          />
        </div>
      ) : null}
    </div>
  );
}
