// Display helpers of the detail page. No zod here (browser bundle): timestamps are read the way
// lib/orkestr/schemas/common.ts toDate() reads them, RFC 3339 strings or unix seconds/milliseconds.

export type WireTime = string | number | null | undefined;

/** Milliseconds since the epoch, or null for null, undefined or unparsable values. */
export function toMs(t: WireTime): number | null {
  if (t === null || t === undefined || t === "") return null;
  if (typeof t === "number") return Number.isFinite(t) ? (t < 1e12 ? t * 1000 : t) : null;
  if (/^\d+(\.\d+)?$/.test(t)) return toMs(Number(t));
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : ms;
}

/** "2025-06-01 12:00:05" in the viewer's time zone (24 h, sortable, unambiguous). */
export function formatDateTime(t: WireTime): string {
  const ms = toMs(t);
  if (ms === null) return "—";
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** "12:00:05" */
export function formatClock(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** "4 min 05 s", "1 h 02 min", "12 s". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

/** "412.1 MiB" */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return "—";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 100 || i === 0 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

export function formatPercent(p: number | null | undefined, digits = 1): string {
  return p === null || p === undefined || !Number.isFinite(p) ? "—" : `${p.toFixed(digits)} %`;
}

export function formatMemoryMb(mb: number | null | undefined): string {
  if (mb === null || mb === undefined) return "—";
  return mb >= 1024 ? `${+(mb / 1024).toFixed(1)} GiB` : `${mb} MiB`;
}
