import { useId } from "react";
import { cn } from "../../lib/utils";
import { Badge } from "../ui/badge";
import { gaugePercent, type Gauge, type GaugeState } from "./limits-model";
import { TeamLink as Link } from "../layout/team-link";

const STATE_BADGE: Record<GaugeState, { label: string; variant: "success" | "warning" | "destructive" | "neutral" }> = {
  ok: { label: "Room left", variant: "success" },
  near: { label: "Nearly full", variant: "warning" },
  full: { label: "At the cap", variant: "destructive" },
  unknown: { label: "Use not reported", variant: "neutral" },
  uncapped: { label: "No cap", variant: "neutral" },
};

const BAR_CLASS: Record<GaugeState, string> = {
  ok: "bg-primary",
  near: "bg-warning",
  full: "bg-destructive",
  unknown: "bg-muted-foreground",
  uncapped: "bg-muted-foreground",
};

/**
 * One used/cap pair: the exact figures, a bar that assistive technology reads as a meter (its
 * value and maximum are the API's numbers, its text the sentence on screen), what happens at the
 * cap and what to do about it.
 */
export function GaugeCard({ gauge: g }: { gauge: Gauge }) {
  const labelId = useId();
  const state = STATE_BADGE[g.state];
  const figures = g.cap === null ? `${g.usedText} used` : `${g.usedText} of ${g.capText}`;
  return (
    <section
      aria-labelledby={labelId}
      data-testid={`gauge-${g.id}`}
      className="flex flex-col gap-3 rounded-lg border bg-card p-4 text-card-foreground"
    >
      <div className="flex items-start justify-between gap-2">
        <h3 id={labelId} className="text-sm font-medium">
          {g.label}
        </h3>
        <Badge variant={state.variant} data-testid="gauge-state">
          {g.stateLabel ?? state.label}
        </Badge>
      </div>
      <p className="text-2xl font-semibold tabular-nums" data-testid="gauge-figures">
        {figures}
      </p>
      {g.cap !== null && g.used !== null ? (
        <div
          role="meter"
          aria-labelledby={labelId}
          aria-valuemin={0}
          aria-valuemax={g.cap}
          aria-valuenow={Math.min(g.used, g.cap)}
          aria-valuetext={`${figures}${g.used > g.cap ? " (over the cap)" : ""}`}
          data-used={g.used}
          data-cap={g.cap}
          className="h-2 w-full overflow-hidden rounded-full bg-muted"
        >
          <div
            className={cn("h-full rounded-full transition-[width] duration-500", BAR_CLASS[g.state])}
            style={{ width: `${gaugePercent(g)}%` }}
          />
        </div>
      ) : null}
      {g.note ? (
        <p className="rounded-md border border-warning/60 bg-warning/15 px-2 py-1.5 text-xs" data-testid="gauge-note">
          {g.note}
        </p>
      ) : null}
      <div className="flex flex-col gap-1 text-xs text-muted-foreground">
        <p>
          <span className="font-medium text-foreground">At the cap: </span>
          {g.atCap}
        </p>
        <p>
          <span className="font-medium text-foreground">What to do: </span>
          {g.remedy}{" "}
          {g.link ? (
            <Link href={g.link.href} className="font-medium text-primary underline underline-offset-4">
              {g.link.label}
            </Link>
          ) : null}
        </p>
      </div>
    </section>
  );
}
