// What the snapshot pages say about a snapshot and the plan's cap, from what the API says and
// nothing else: the cap as used / cap, which snapshots to delete when it is reached, whether memory
// was captured (and the server's own reason when it was not), and the source sandbox's fate.

import type { Limits } from "../../lib/orkestr/schemas/limits";
import type { Snapshot } from "../../lib/orkestr/schemas/snapshots";
import { toMs } from "../../lib/format";

export interface SnapshotCap {
  /** Named snapshots held now: the limits' count, or the list's length when the server gives none. */
  used: number | null;
  /** The plan's cap, or null when the server names none (no cap, or not said). */
  cap: number | null;
  full: boolean;
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

export function snapshotCap(limits: Limits | null | undefined, listed: readonly Snapshot[] | undefined): SnapshotCap {
  // `named_snapshots` is the engine's field beside the contract's max_named_snapshots (limits are loose).
  const used =
    num((limits as { named_snapshots?: unknown } | null | undefined)?.named_snapshots) ?? listed?.length ?? null;
  const cap = num(limits?.max_named_snapshots);
  return { used, cap, full: used !== null && cap !== null && used >= cap };
}

/** The oldest snapshots first, `n` of them: what the cap error suggests deleting. */
export function oldestSnapshots(snapshots: readonly Snapshot[], n = 3): Snapshot[] {
  return [...snapshots].sort((a, b) => (toMs(a.created_at) ?? Infinity) - (toMs(b.created_at) ?? Infinity)).slice(0, n);
}

export interface MemoryFact {
  /** "yes", "no", or "unknown" when the server does not say. */
  captured: "yes" | "no" | "unknown";
  /** One sentence: what a fork gets. */
  summary: string;
  /** The server's own reason memory is not captured, when it gives one (the local engine's isolation report). */
  reason: string | null;
}

/** The isolation report's line about snapshots (the local engine names why memory is not kept). */
function engineReason(limits: Limits | null | undefined): string | null {
  const isolation = (limits as { isolation?: { degraded?: unknown } } | null | undefined)?.isolation;
  const degraded = Array.isArray(isolation?.degraded) ? isolation.degraded : [];
  const line = degraded.find((d): d is string => typeof d === "string" && /snapshot/i.test(d));
  return line ?? null;
}

export function memoryFact(snapshot: Snapshot, limits: Limits | null | undefined): MemoryFact {
  const includesMemory = (limits as { snapshots_include_memory?: unknown } | null | undefined)
    ?.snapshots_include_memory;
  const captured =
    snapshot.memory_captured === true
      ? "yes"
      : snapshot.memory_captured === false
        ? "no"
        : includesMemory === true
          ? "yes"
          : includesMemory === false
            ? "no"
            : "unknown";
  const paths = snapshot.captured_paths?.length ? snapshot.captured_paths.join(" and ") : null;
  if (captured === "yes")
    return { captured, summary: "Memory and files: a fork resumes where the source was.", reason: null };
  if (captured === "no")
    return {
      captured,
      summary: `Files only${paths ? ` (${paths})` : ""}: a fork starts its processes afresh.`,
      reason: engineReason(limits),
    };
  return { captured, summary: "The server does not say whether memory is captured.", reason: null };
}

/** What the list says about the source sandbox: still there (with its status), or gone. */
export type SourceState =
  | { kind: "loading" }
  | { kind: "live"; status: string }
  | { kind: "ended"; status: string }
  | { kind: "gone" }
  | { kind: "unknown"; error: string };

/** A wire timestamp as a <time dateTime> value (RFC 3339), or undefined when unreadable. */
export function dateTimeAttr(t: string | number | null | undefined): string | undefined {
  const ms = toMs(t);
  return ms === null ? undefined : new Date(ms).toISOString();
}
