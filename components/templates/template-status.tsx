import { cn } from "../../lib/utils";
import { Badge } from "../ui/badge";
import type { Tone } from "../ui/tone";

// A template's build status (queued, building, ready, failed) in the console's tones; an unknown one
// (a newer server's) shows as is, in the neutral tone.

const TONE: Record<string, Tone> = { ready: "success", failed: "destructive", queued: "pending", building: "pending" };
const DOT: Record<Tone, string> = {
  success: "bg-success",
  destructive: "bg-destructive",
  warning: "bg-warning",
  neutral: "bg-muted-foreground",
  pending: "bg-primary animate-pulse motion-reduce:animate-none",
};

export function TemplateStatusBadge({ status, className }: { status: string | null | undefined; className?: string }) {
  const name = status ?? "unknown";
  const tone = TONE[name] ?? "neutral";
  return (
    <Badge variant={tone} className={cn("capitalize", className)} data-testid="template-status">
      <span aria-hidden="true" className={cn("size-1.5 rounded-full", DOT[tone])} />
      {name}
    </Badge>
  );
}
