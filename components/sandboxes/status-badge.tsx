import type { ComponentProps } from "react";
import { statusTone, type StatusTone } from "../../lib/sandbox-status";
import { cn } from "../../lib/utils";
import { Badge } from "../ui/badge";

const DOT: Record<StatusTone, string> = {
  success: "bg-success",
  warning: "bg-warning",
  destructive: "bg-destructive",
  neutral: "bg-muted-foreground",
  // On its way to another status: the dot pulses (still for people who ask for less motion).
  pending: "bg-primary animate-pulse motion-reduce:animate-none",
};

/** A sandbox's status as the upstream named it, in its tone (lib/sandbox-status.ts); an unknown one shows as is. */
export function StatusBadge({ status, className, ...props }: { status: string } & ComponentProps<"span">) {
  const tone = statusTone(status);
  return (
    <Badge variant={tone} className={cn("capitalize", className)} {...props}>
      <span aria-hidden="true" className={cn("size-1.5 rounded-full", DOT[tone])} />
      {status}
    </Badge>
  );
}
