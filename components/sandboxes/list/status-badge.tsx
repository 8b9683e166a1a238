import { Badge, type BadgeProps } from "../../ui/badge";

const VARIANT: Record<string, BadgeProps["variant"]> = {
  running: "success",
  paused: "warning",
  failed: "destructive",
  creating: "outline",
  pausing: "outline",
  resuming: "outline",
  terminated: "secondary",
  expired: "secondary",
};

/** A sandbox's status as the upstream named it (an unknown status is shown as is, outlined). */
export function StatusBadge({ status }: { status: string }) {
  const transitional = status === "creating" || status === "pausing" || status === "resuming";
  return (
    <Badge variant={VARIANT[status] ?? "outline"} className="capitalize">
      {transitional ? <span aria-hidden="true" className="size-1.5 animate-pulse rounded-full bg-current" /> : null}
      {status}
    </Badge>
  );
}
