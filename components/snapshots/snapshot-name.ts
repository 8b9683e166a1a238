// A snapshot's name, checked where it is typed: the engine's rule (names are accepted wherever an
// id is, so one may never look like an id), said next to the field before a round trip.

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const MAX_SNAPSHOT_NAME = 63;

/** Why `name` cannot be a snapshot's name, or null when it can. */
export function snapshotNameError(name: string): string | null {
  if (!name) return "Give the snapshot a name.";
  if (name.length > MAX_SNAPSHOT_NAME) return `At most ${MAX_SNAPSHOT_NAME} characters.`;
  if (!NAME.test(name)) return "Letters, digits, '.', '_' and '-', starting with a letter or digit.";
  if (name.toLowerCase().startsWith("snap_")) return 'Names may not start with "snap_" (ids do).';
  return null;
}

const pad = (n: number) => String(n).padStart(2, "0");

/**
 * A name to start from: the source's template and the time, in UTC (e.g. python-3.12-20261203-2359),
 * so two snapshots of one sandbox differ and the list sorts them by name as by time.
 */
export function suggestSnapshotName(template: string | null | undefined, now: Date): string {
  const stamp = `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}-${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}`;
  const base = (template ?? "").replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "");
  const name = base && !base.toLowerCase().startsWith("snap_") ? `${base}-${stamp}` : `snapshot-${stamp}`;
  return name.slice(0, MAX_SNAPSHOT_NAME);
}
