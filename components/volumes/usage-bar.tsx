import { formatGibibytes, formatMebibytes } from "../../lib/format";
import type { Volume } from "../../lib/orkestr/schemas/volumes";
import { cn } from "../../lib/utils";
import { usedFraction } from "./volume-model";

/**
 * Space used against the size, as a bar with the numbers beside it. A native <meter> would carry the
 * semantics, but its look cannot be styled alike across browsers; role="meter" gives the same.
 */
export function UsageBar({ volume }: { volume: Volume }) {
  const fraction = usedFraction(volume);
  const size = typeof volume.size_gb === "number" ? formatGibibytes(volume.size_gb) : "?";
  const used = typeof volume.size_mb === "number" ? formatMebibytes(volume.size_mb) : "unknown";
  const label = `${used} of ${size} used`;
  return (
    <div className="flex min-w-32 flex-col gap-1">
      <div
        role="meter"
        aria-label={`Space used on ${volume.name ?? volume.id}`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={fraction === null ? undefined : Math.round(fraction * 100)}
        aria-valuetext={label}
        className="h-1.5 w-full overflow-hidden rounded-full bg-muted"
      >
        <div
          className={cn(
            "h-full rounded-full",
            fraction !== null && fraction >= 0.9
              ? "bg-destructive"
              : fraction !== null && fraction >= 0.75
                ? "bg-warning"
                : "bg-primary",
          )}
          style={{ width: `${fraction === null ? 0 : Math.max(fraction * 100, fraction > 0 ? 2 : 0)}%` }}
        />
      </div>
      <span className="text-xs tabular-nums text-muted-foreground">
        {used} / {size}
        {volume.size_enforced === false ? " (not enforced here)" : ""}
      </span>
    </div>
  );
}
