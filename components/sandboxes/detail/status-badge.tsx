import { Badge, type BadgeProps } from "../../ui/badge";

const VARIANT: Record<string, BadgeProps["variant"]> = {
  running: "success",
  paused: "warning",
  pausing: "secondary",
  resuming: "secondary",
  creating: "secondary",
  terminated: "outline",
  expired: "outline",
  failed: "destructive",
};

/** A sandbox status as a badge; unknown statuses (a newer server) show as they came. */
export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge variant={VARIANT[status] ?? "outline"} data-testid="sandbox-status">
      <span aria-hidden="true" className={status === "running" ? "size-1.5 rounded-full bg-current" : "hidden"} />
      {status}
    </Badge>
  );
}
