// How numbers, sizes, money, durations and times read on screen: one format each, used by every
// page. No zod and no Intl beyond one fixed-locale formatter, so it costs a page next to nothing.
// Sizes are IEC (1 KiB = 1024 B), the way the engine counts memory, files and disk: its `*_mb`
// fields are MiB (bytes / 1024²) and a volume's `size_gb` is GiB, so they go through the MiB and GiB
// readers below and never read as MB or GB.

// One timestamp reader for server and browser alike (lib/orkestr/timestamp.ts, zod-free).
import { toMs } from "./orkestr/timestamp";
export { toMs };

/** A timestamp as the API sends it: RFC 3339, or unix seconds or milliseconds (number or digits). */
export type WireTime = string | number | null | undefined;

const IEC_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/**
 * 1536 → "1.5 KiB", 432_116_531 → "412 MiB", 2 GiB → "2 GiB": one decimal below 100 (dropped when
 * it is 0), whole numbers above; "—" for null, undefined or not a number.
 */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return "—";
  let v = Math.abs(bytes);
  let i = 0;
  while (v >= 1024 && i < IEC_UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  const digits = i === 0 || v >= 100 ? String(Math.round(v)) : String(+v.toFixed(1));
  return `${bytes < 0 ? "-" : ""}${digits} ${IEC_UNITS[i]}`;
}

/** A size given in MiB (the API's `memory_mb`, `size_mb`, `*_mb`): "512 MiB", "2 GiB". */
export function formatMebibytes(mib: number | null | undefined): string {
  return mib === null || mib === undefined ? "—" : formatBytes(mib * 1024 ** 2);
}

/** A size given in GiB (a volume's `size_gb`, `max_volume_gb`: the engine's "GB" is 1024 MiB): "10 GiB". */
export function formatGibibytes(gib: number | null | undefined): string {
  return gib === null || gib === undefined ? "—" : formatBytes(gib * 1024 ** 3);
}

/**
 * Euros, the one money formatter (caps, the header meter, usage tables, costs; lib/usage/caps.ts
 * formatMicro is this on micro-euros). From €1 on, cents: "€12.35", "€1,234.50". Below, two
 * significant digits and at least two decimals, so a real amount never reads as zero: "€0.42",
 * "€0.0042", "€0.000003" (a minute of a small sandbox costs a fraction of a cent, and "€0.00 used"
 * would hide that the credit is being drawn), down to the API's millionths: a cost under one is
 * "< €0.000001". An amount under a cent never reads as a cent: 9,999 µ€ is "€0.009999", not
 * "€0.01", so a spend just under a one-cent cap does not read as the cap ("€0.01 of €0.01").
 * "—" for null, undefined or not a number. Small on purpose: every page loads this file.
 */
export function formatEur(eur: number | null | undefined): string {
  if (eur === null || eur === undefined || !Number.isFinite(eur)) return "—";
  const abs = Math.abs(eur);
  // Below 1 €: the first significant digit's place and one more, at most six decimals.
  let text = abs.toFixed(abs >= 1 || !abs ? 2 : Math.min(6, Math.max(2, 1 - Math.floor(Math.log10(abs)))));
  if (abs && !+text) return "< €0.000001";
  // Rounded up to a whole cent from below it: the millionths instead (never "€0.01" for 9,999 µ€).
  if (abs < 0.01 && +text >= 0.01) text = abs.toFixed(6);
  // Trailing zeros past the cents go ("0.0040" → "0.004"); thousands are grouped.
  return `${eur < 0 ? "-" : ""}€${text.replace(/(\.\d\d\d*?)0+$/, "$1").replace(/\B(?=(\d{3})+\.)/g, ",")}`;
}

/**
 * Whole micro-euros (1 EUR = 1,000,000 µ€, how usage, caps and the rate card count money) through
 * formatEur: "€12.34", and a spend under a cent as itself ("€0.0031"), never "€0.01" or "€0.00".
 */
export function formatMicro(micro: number | null | undefined): string {
  return micro === null || micro === undefined ? "—" : formatEur(micro / 1_000_000);
}

/** "42.0 %" (one decimal by default); "—" for null, undefined or not a number. */
export function formatPercent(p: number | null | undefined, digits = 1): string {
  return p === null || p === undefined || !Number.isFinite(p) ? "—" : `${p.toFixed(digits)} %`;
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/**
 * A length of time in milliseconds, two units at most, a zero second unit left out:
 * "42s", "4m 05s", "15m", "1h 02m", "1h", "3d 4h", "2d". Negative durations read as "0s".
 */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m ${pad2(s % 60)}s` : `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${pad2(m % 60)}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

/** How long ago, given the time elapsed in ms: "just now" under a minute, then "5m ago", "3h ago", "2d ago". */
export function formatAgo(elapsedMs: number): string {
  if (elapsedMs < 60_000) return "just now";
  const m = Math.floor(elapsedMs / 60_000);
  if (m < 60) return `${m}m ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ago`;
  return `${Math.floor(h / 24)}d ago`;
}

/** "2025-06-01 12:00:05" in the viewer's time zone: 24 h, sortable, unambiguous; "—" when absent or unreadable. */
export function formatDateTime(t: WireTime): string {
  const ms = toMs(t);
  if (ms === null) return "—";
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${formatClock(ms)}`;
}

/** "12:00:05" in the viewer's time zone (chart axes). */
export function formatClock(ms: number): string {
  const d = new Date(ms);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

const utcDateTime = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "medium", timeZone: "UTC" });

/**
 * Full date and time in UTC, for tooltips and <time> titles: the fixed locale and zone make the
 * server's render and the browser's the same text (no hydration mismatch). "—" when unreadable.
 */
export function formatUtc(t: WireTime): string {
  const ms = toMs(t);
  return ms === null ? "—" : `${utcDateTime.format(ms)} UTC`;
}
