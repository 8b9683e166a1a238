import { formatMicro, type CapAction, type CapWindow } from "../../lib/usage/caps";
import { cn } from "../../lib/utils";
import { TeamLink as Link } from "./team-link";

// The caller's closest spend cap, once past 50 %: a small meter in the header (server-rendered, so
// no code of its own reaches the browser), and a banner under it once the cap is reached. Both
// link to /usage, where the caps are.

export interface SpendMeterData {
  cap: { userId: string | null; window: CapWindow; limitMicro: number; action: CapAction };
  spentMicro: number;
  percent: number;
  reached: boolean;
}

const whose = (m: SpendMeterData) =>
  `${m.cap.userId ? "Your" : "The team's"} ${m.cap.window === "month" ? "monthly" : "daily"} spend cap`;

export function SpendMeter({ meter }: { meter: SpendMeterData }) {
  const pct = Math.min(100, Math.floor(meter.percent));
  // The name starts with what the meter shows ("57 %"), as speech input expects (WCAG 2.5.3).
  const cap = whose(meter);
  const label = `${pct} % of ${cap[0]!.toLowerCase()}${cap.slice(1)} (${formatMicro(meter.spentMicro)} of ${formatMicro(meter.cap.limitMicro)})`;
  return (
    <Link
      href="/usage#spend-caps"
      title={label}
      aria-label={label}
      data-testid="spend-meter"
      className="hidden items-center gap-2 rounded-md px-2 py-1 text-xs font-medium hover:bg-accent focus-visible:outline-2 focus-visible:outline-ring sm:flex"
    >
      <span className="tabular-nums">{pct} %</span>
      <span aria-hidden className="h-1.5 w-16 overflow-hidden rounded-full bg-muted">
        <span
          className={cn("block h-full", meter.reached ? "bg-destructive" : pct >= 80 ? "bg-warning" : "bg-primary")}
          style={{ width: `${pct}%` }}
        />
      </span>
    </Link>
  );
}

export function SpendCapBanner({ meter }: { meter: SpendMeterData }) {
  if (!meter.reached) return null;
  const what =
    meter.cap.action === "pause"
      ? "Baton paused the running sandboxes it covers and refuses new ones, resumes and keep-alives."
      : meter.cap.action === "block"
        ? "Baton refuses new sandboxes, resumes and keep-alives; running sandboxes keep running."
        : "It only alerts: nothing is stopped.";
  return (
    <div
      role="status"
      data-testid="spend-cap-banner"
      className="border-b border-destructive/40 bg-destructive/10 px-4 py-2 text-sm text-foreground md:px-6"
    >
      <strong>{whose(meter)} is reached</strong> ({formatMicro(meter.spentMicro)} of {formatMicro(meter.cap.limitMicro)}
      , UTC). {what}{" "}
      <Link href="/usage#spend-caps" className="font-medium underline underline-offset-4">
        See usage and caps
      </Link>
    </div>
  );
}
