import { cn } from "../../lib/utils";
import { Badge } from "../ui/badge";
import type { Tone } from "../ui/tone";

const TONE: Record<string, Tone> = {
  available: "success",
  attached: "neutral",
  creating: "pending",
  moving: "pending",
  deleting: "pending",
  error: "destructive",
};

const DOT: Record<Tone, string> = {
  success: "bg-success",
  warning: "bg-warning",
  destructive: "bg-destructive",
  neutral: "bg-primary",
  // On its way to another status: the dot pulses (still for people who ask for less motion).
  pending: "bg-primary animate-pulse motion-reduce:animate-none",
};

/** A volume's status as the API named it; an unknown one shows as is, in the neutral tone. */
export function VolumeStatusBadge({ status }: { status: string }) {
  const tone = TONE[status] ?? "neutral";
  return (
    <Badge variant={tone} className="capitalize" data-testid="volume-status">
      <span aria-hidden="true" className={cn("size-1.5 rounded-full", DOT[tone])} />
      {status}
    </Badge>
  );
}
