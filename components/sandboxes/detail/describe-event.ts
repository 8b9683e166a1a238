// One timeline entry in words: a category (for the icon and the filter) and a one-line summary,
// from the event's `type` and `data` (GET /v1/sandboxes/{id}/events). Unknown types (a newer server)
// still show, as they came.

import { formatBytes } from "../../../lib/format";
import type { SandboxEvent } from "../../../lib/orkestr/schemas/events";
import { SCAN_COMMAND } from "../../../lib/queries/previews";

export type EventCategory = "lifecycle" | "exec" | "file" | "other";

export interface DescribedEvent {
  category: EventCategory;
  title: string;
  /** Extra facts (exit code, duration, size…). */
  detail: string | null;
  /** A failed exec or start. */
  failed: boolean;
}

const str = (v: unknown): string | null => (typeof v === "string" && v ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

const LIFECYCLE: Record<string, string> = {
  "sandbox.created": "Created",
  "sandbox.paused": "Paused",
  "sandbox.resumed": "Resumed",
  "sandbox.terminated": "Terminated",
  "sandbox.expired": "Countdown ended",
  "sandbox.failed": "Failed",
  "timeout.updated": "Countdown restarted",
  "snapshot.created": "Snapshot taken",
  "preview.token_rotated": "Preview token rotated",
};

export function describeEvent(e: SandboxEvent): DescribedEvent {
  const d = e.data ?? {};
  if (e.type === "exec" || e.type === "exec.stream") {
    const exit = num(d.exit_code);
    const duration = num(d.duration_ms);
    const facts = [
      exit !== null ? `exit ${exit}` : null,
      duration !== null ? `${duration} ms` : null,
      d.timed_out === true ? "timed out" : null,
      e.type === "exec.stream" ? "streamed" : null,
    ];
    // The Previews tab finds listening ports by exec: say so rather than show its shell one-liner.
    const title = d.command === SCAN_COMMAND ? "Port scan (Baton's Previews tab)" : (str(d.command) ?? "(command)");
    return {
      category: "exec",
      title,
      detail: facts.filter(Boolean).join(" · ") || null,
      failed: (exit !== null && exit !== 0) || d.timed_out === true,
    };
  }
  if (e.type === "pty.open" || e.type === "pty.exit") {
    const exit = num(d.exit_code);
    return {
      category: "exec",
      title: `${e.type === "pty.open" ? "Terminal opened" : "Terminal closed"}${str(d.command) ? `: ${str(d.command)}` : ""}`,
      detail:
        e.type === "pty.exit"
          ? [exit !== null ? `exit ${exit}` : null, str(d.reason)].filter(Boolean).join(" · ") || null
          : null,
      failed: false,
    };
  }
  if (e.type === "file.write" || e.type === "file.delete") {
    const size = num(d.size);
    return {
      category: "file",
      title: `${e.type === "file.write" ? "Wrote" : "Deleted"} ${str(d.path) ?? "a file"}`,
      detail:
        [size === null ? null : formatBytes(size), d.recursive === true ? "recursive" : null]
          .filter(Boolean)
          .join(" · ") || null,
      failed: false,
    };
  }
  if (e.type in LIFECYCLE) {
    const extra: (string | null)[] = [];
    if (e.type === "sandbox.created")
      extra.push(
        str(d.template),
        str(d.size),
        str(d.network) ? `network ${str(d.network)}` : null,
        str(d.snapshot_id) ? `from ${str(d.snapshot_id)}` : null,
      );
    if (e.type === "sandbox.expired") extra.push(str(d.action));
    if (e.type === "timeout.updated" && num(d.timeout_seconds) !== null) extra.push(`${num(d.timeout_seconds)} s`);
    if (e.type === "snapshot.created") {
      const snap = d.snapshot as { name?: unknown; id?: unknown } | undefined;
      extra.push(str(snap?.name) ?? str(snap?.id));
    }
    extra.push(str(d.reason));
    return {
      category: "lifecycle",
      title: LIFECYCLE[e.type]!,
      detail: extra.filter(Boolean).join(" · ") || null,
      failed: e.type === "sandbox.failed",
    };
  }
  return {
    category: "other",
    title: e.type,
    detail: Object.keys(d).length ? JSON.stringify(d).slice(0, 200) : null,
    failed: false,
  };
}
