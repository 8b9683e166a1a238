import { cn } from "../../../lib/utils";
import { Badge, type BadgeProps } from "../../ui/badge";

// Tinted rather than solid for running: white text on the solid success green is under 4.5:1.
const STYLE: Record<string, { variant: BadgeProps["variant"]; className?: string; dot?: string }> = {
  running: { variant: "outline", className: "border-success/60 bg-success/10", dot: "bg-success" },
  paused: { variant: "outline", className: "border-warning/70 bg-warning/15", dot: "bg-warning" },
  pausing: { variant: "secondary" },
  resuming: { variant: "secondary" },
  creating: { variant: "secondary" },
  terminated: { variant: "outline" },
  expired: { variant: "outline" },
  failed: { variant: "destructive" },
};

/** A sandbox status as a badge; unknown statuses (a newer server) show as they came. */
export function StatusBadge({ status }: { status: string }) {
  const style = STYLE[status] ?? { variant: "outline" as const };
  return (
    <Badge variant={style.variant} className={style.className} data-testid="sandbox-status">
      {style.dot ? <span aria-hidden="true" className={cn("size-1.5 rounded-full", style.dot)} /> : null}
      {status}
    </Badge>
  );
}
