// A sandbox's status, said once: which statuses there are, which are finished or on their way
// somewhere, how each looks, and which lifecycle action each allows. Every page reads it from here.
// The status is an open enum on the wire (a newer server may send one we do not know): each helper
// takes any string and says what an unknown status means.

import type { SandboxStatusName } from "./orkestr/sandbox-statuses";

export type { SandboxStatusName };

/**
 * Every status the contract names (lib/orkestr/sandbox-statuses.ts), in the order the console lists
 * them (live first, finished last).
 */
export const SANDBOX_STATUSES = [
  "running",
  "paused",
  "creating",
  "pausing",
  "resuming",
  "failed",
  "terminated",
  "expired",
] as const satisfies readonly SandboxStatusName[];

/** Statuses after which nothing changes any more: no polling, no metrics, no actions, no files. */
export const FINISHED_STATUSES: ReadonlySet<string> = new Set<SandboxStatusName>(["terminated", "expired", "failed"]);

/** Statuses that end on their own (the sandbox is re-read until it settles). */
export const TRANSITIONAL_STATUSES: ReadonlySet<string> = new Set<SandboxStatusName>([
  "creating",
  "pausing",
  "resuming",
]);

export const isFinished = (status: string): boolean => FINISHED_STATUSES.has(status);
export const isTransitional = (status: string): boolean => TRANSITIONAL_STATUSES.has(status);

/** Lifecycle actions a person can take on a sandbox. */
export type LifecycleAction = "pause" | "resume" | "terminate";

/**
 * Whether `action` makes sense in `status`: pause a running sandbox, resume a paused one, terminate
 * any that has not finished (terminate is idempotent upstream, so a transitional one may be ended too).
 */
export function allowsAction(status: string, action: LifecycleAction): boolean {
  if (action === "pause") return status === "running";
  if (action === "resume") return status === "paused";
  return !isFinished(status);
}

/** The tones of components/ui/tone.ts a status is drawn in. */
export type StatusTone = "success" | "warning" | "destructive" | "neutral" | "pending";

const TONE: Record<SandboxStatusName, StatusTone> = {
  running: "success",
  paused: "warning",
  failed: "destructive",
  creating: "pending",
  pausing: "pending",
  resuming: "pending",
  terminated: "neutral",
  expired: "neutral",
};

/** A status's tone; an unknown one is neutral (nothing is claimed about it). */
export function statusTone(status: string): StatusTone {
  return (TONE as Record<string, StatusTone>)[status] ?? "neutral";
}
