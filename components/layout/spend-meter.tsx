import { alertThresholdCrossed, formatMicro, type CapAction, type CapWindow } from "../../lib/usage/caps";
import { cn } from "../../lib/utils";
import { DismissibleBanner } from "./dismissible-banner";
import { TeamLink as Link } from "./team-link";

// The caller's closest spend cap, once past 50 % (the first alert threshold): a small meter in the
// header (server-rendered, so no code of its own reaches the browser; hidden below `sm`), and a
// banner under it at every width: amber from each alert threshold on, dismissible for the tab, and
// red once the cap is reached. All link to /usage, where the caps are.

export interface SpendMeterData {
  cap: { id: string; userId: string | null; window: CapWindow; limitMicro: number; action: CapAction };
  /** The window the figure is for: a dismissed warning is dismissed for it (and its threshold) only. */
  windowKey: string;
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

/**
 * Past an alert threshold and short of the cap: how close it is, and what happens at 100 %. A
 * dismissal holds for this tab, this cap, this window and this threshold: crossing the next one
 * shows it again.
 */
export function SpendAlertBanner({ meter }: { meter: SpendMeterData }) {
  const threshold = alertThresholdCrossed(meter.percent);
  if (meter.reached || threshold === null || threshold >= 100) return null;
  const own = meter.cap.userId !== null;
  // Floored, like the meter: 99.6 % is not "100 %" while the cap does not act yet.
  const pct = Math.floor(meter.percent);
  const window = meter.cap.window === "month" ? "monthly" : "daily";
  // "100 %" with a no-break space: at 390 px the number and its sign must not part at a line end.
  const then =
    meter.cap.action === "block"
      ? "New sandboxes will be refused at 100\u00a0%."
      : meter.cap.action === "pause"
        ? `At 100\u00a0%, Baton pauses ${own ? "your" : "the team's"} running sandboxes and refuses new ones.`
        : "Nothing is stopped at 100\u00a0%: this cap only alerts.";
  return (
    <DismissibleBanner
      id={`spend-alert:${meter.cap.id}:${meter.windowKey}:${threshold}`}
      testId="spend-alert-banner"
      className="flex items-start gap-3 border-b border-warning/60 bg-warning/15 px-4 py-2 text-sm text-foreground md:px-6"
    >
      <strong>
        {own ? "Your spend" : "Team spend"} is at {pct}&nbsp;% of {own ? "your" : "its"}{" "}
        {formatMicro(meter.cap.limitMicro)} {window} cap
      </strong>{" "}
      ({formatMicro(meter.spentMicro)} spent {meter.cap.window === "month" ? "this month" : "today"}, UTC). {then}{" "}
      <Link href="/usage#spend-caps" className="font-medium underline underline-offset-4">
        See usage and caps
      </Link>
    </DismissibleBanner>
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
