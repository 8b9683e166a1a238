// Short, stable formats for table cells (fixed locale: server and browser render the same text).

/** "4m 05s", "2h 10m", "3d 4h". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** "5m ago", "3h ago", "2d ago"; "just now" under a minute. */
export function formatAgo(ms: number): string {
  if (ms < 60_000) return "just now";
  const m = Math.floor(ms / 60_000);
  if (m < 60) return `${m}m ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ago`;
  return `${Math.floor(h / 24)}d ago`;
}

const dateTime = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "medium", timeZone: "UTC" });

/** Full UTC date and time for tooltips and <time> titles. */
export function formatUtc(ms: number): string {
  return `${dateTime.format(ms)} UTC`;
}

/** "512 MiB", "1.2 GiB". */
export function formatBytes(bytes: number): string {
  const mib = bytes / 1024 ** 2;
  return mib < 1024 ? `${Math.round(mib)} MiB` : `${(mib / 1024).toFixed(1)} GiB`;
}
