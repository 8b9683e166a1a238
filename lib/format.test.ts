import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  formatAgo,
  formatBytes,
  formatClock,
  formatDateTime,
  formatDuration,
  formatEur,
  formatMicro,
  formatGibibytes,
  formatMebibytes,
  formatPercent,
  formatUtc,
  toMs,
} from "./format";

describe("formatBytes (IEC units)", () => {
  it.each([
    [0, "0 B"],
    [512, "512 B"],
    [1023, "1023 B"],
    [1024, "1 KiB"],
    [1536, "1.5 KiB"],
    [10_240, "10 KiB"],
    [99.94 * 1024, "99.9 KiB"],
    [150 * 1024, "150 KiB"],
    [432_116_531, "412 MiB"],
    [12.34 * 1024 ** 2, "12.3 MiB"],
    [2 * 1024 ** 3, "2 GiB"],
    [1.25 * 1024 ** 4, "1.3 TiB"],
    [-1536, "-1.5 KiB"],
  ])("%d bytes read %s", (n, text) => expect(formatBytes(n)).toBe(text));

  it("says — for nothing", () => {
    for (const n of [null, undefined, Number.NaN, Number.POSITIVE_INFINITY]) expect(formatBytes(n)).toBe("—");
  });

  it("never writes the SI-looking units the Files tab once used", () => {
    for (const n of [1536, 5 * 1024 ** 2, 3 * 1024 ** 3]) expect(formatBytes(n)).toMatch(/ (KiB|MiB|GiB)$/);
  });

  it("reads MiB sizes from the API the same way", () => {
    expect(formatMebibytes(512)).toBe("512 MiB");
    expect(formatMebibytes(2048)).toBe("2 GiB");
    expect(formatMebibytes(1536)).toBe("1.5 GiB");
    expect(formatMebibytes(null)).toBe("—");
  });

  it("reads the engine's fractional MiB (a template layer's 0.03) as the same KiB everywhere", () => {
    expect(formatMebibytes(0.03)).toBe("30.7 KiB");
    expect(formatMebibytes(0)).toBe("0 B");
  });

  it("reads a volume's GB as GiB (the engine's GB is 1024 MiB)", () => {
    expect(formatGibibytes(10)).toBe("10 GiB");
    expect(formatGibibytes(100)).toBe("100 GiB");
    expect(formatGibibytes(2048)).toBe("2 TiB");
    expect(formatGibibytes(undefined)).toBe("—");
    // The used space (MiB) and the size (GiB) of one volume in one unit.
    expect(`${formatMebibytes(1024)} of ${formatGibibytes(1)}`).toBe("1 GiB of 1 GiB");
  });
});

describe("formatEur", () => {
  it.each([
    [0, "€0.00"],
    // Below 1 €: two significant digits, never fewer than two decimals, so a real amount never reads €0.
    [0.000003, "€0.000003"],
    [0.0000034, "€0.000003"],
    [0.000049, "€0.000049"],
    [0.00421, "€0.0042"],
    [0.015, "€0.015"],
    [0.05, "€0.05"],
    [0.1, "€0.10"],
    [0.0999, "€0.10"],
    [0.42, "€0.42"],
    [0.9996, "€1.00"],
    // From 1 € on: cents, grouped.
    [1, "€1.00"],
    [1.5, "€1.50"],
    [12.345, "€12.35"],
    [25, "€25.00"],
    [1234.5, "€1,234.50"],
    [1_234_567.891, "€1,234,567.89"],
    [-0.0042, "-€0.0042"],
    [-3, "-€3.00"],
  ])("%d reads %s", (n, text) => expect(formatEur(n)).toBe(text));

  it("says a cost under the API's millionth is not zero, in a list column's width", () => {
    expect(formatEur(0.0000004)).toBe("< €0.000001");
    expect(formatEur(1.5e-7)).toBe("< €0.000001");
    for (const n of [1.5e-7, 0.0000123, 0.00042, 0.042, 0.42]) expect(formatEur(n).length).toBeLessThanOrEqual(11);
  });

  it("never rounds an amount the API reports (millionths) to zero", () => {
    for (let micro = 1; micro < 10_000; micro += 7) {
      const eur = micro / 1e6;
      const shown = Number(formatEur(eur).replace("€", ""));
      expect(shown, `${eur}`).toBeGreaterThan(0);
      expect(Math.abs(shown - eur) / eur, `${eur} read ${formatEur(eur)}`).toBeLessThanOrEqual(0.05);
    }
  });

  it("says — for nothing", () => {
    for (const n of [null, undefined, Number.NaN, Number.POSITIVE_INFINITY]) expect(formatEur(n)).toBe("—");
  });
});

describe("formatMicro (whole micro-euros: caps, the header meter, usage tables)", () => {
  it.each([
    [0, "€0.00"],
    [1, "€0.000001"],
    [42, "€0.000042"],
    [3_100, "€0.0031"],
    [5_000, "€0.005"],
    // Just under a cent reads as under a cent, not as the cent (a one-cent cap is not reached).
    [9_950, "€0.00995"],
    [9_999, "€0.009999"],
    [10_000, "€0.01"],
    [10_001, "€0.01"],
    [125_000, "€0.13"],
    [2_500_000, "€2.50"],
    [12_345_678, "€12.35"],
    [1_000_000_000_000, "€1,000,000.00"],
    [1_234_567_890_123, "€1,234,567.89"],
    [-1, "-€0.000001"],
    [-3_100, "-€0.0031"],
    [-2_500_000, "-€2.50"],
  ])("%d µ€ reads %s", (micro, text) => expect(formatMicro(micro)).toBe(text));

  it("says — for nothing", () => {
    expect(formatMicro(null)).toBe("—");
    expect(formatMicro(undefined)).toBe("—");
    expect(formatMicro(Number.NaN)).toBe("—");
  });

  it("shows a tiny cap's figures as they are (was €0.01 of €0.01 for €0.0031 of €0.0050)", () => {
    expect(`${formatMicro(3_100)} of ${formatMicro(5_000)}`).toBe("€0.0031 of €0.005");
  });

  it("never shows a non-zero amount under a cent as €0.00 or as a whole cent", () => {
    for (let micro = 1; micro < 10_000; micro++) {
      const shown = Number(formatMicro(micro).replace("€", ""));
      expect(shown, `${micro} µ€ read ${formatMicro(micro)}`).toBeGreaterThan(0);
      expect(shown, `${micro} µ€ read ${formatMicro(micro)}`).toBeLessThan(0.01);
    }
  });
});

describe("formatDuration", () => {
  it.each([
    [-5_000, "0s"],
    [0, "0s"],
    [999, "0s"],
    [42_000, "42s"],
    [60_000, "1m"],
    [245_000, "4m 05s"],
    [900_000, "15m"],
    [3_600_000, "1h"],
    [3_720_000, "1h 02m"],
    [86_399_000, "23h 59m"],
    [86_400_000, "1d"],
    [(3 * 24 + 4) * 3_600_000, "3d 4h"],
  ])("%d ms reads %s", (ms, text) => expect(formatDuration(ms)).toBe(text));
});

describe("formatAgo", () => {
  it.each([
    [0, "just now"],
    [59_999, "just now"],
    [60_000, "1m ago"],
    [5 * 60_000, "5m ago"],
    [3 * 3_600_000, "3h ago"],
    [47 * 3_600_000, "47h ago"],
    [48 * 3_600_000, "2d ago"],
  ])("%d ms ago reads %s", (ms, text) => expect(formatAgo(ms)).toBe(text));
});

describe("timestamps", () => {
  const tz = process.env.TZ;
  beforeAll(() => {
    process.env.TZ = "UTC";
  });
  afterAll(() => {
    process.env.TZ = tz;
  });

  it("reads RFC 3339, unix seconds and unix milliseconds alike", () => {
    const ms = Date.UTC(2025, 5, 1, 12, 0, 5);
    expect(toMs("2025-06-01T12:00:05Z")).toBe(ms);
    expect(toMs(ms / 1000)).toBe(ms);
    expect(toMs(String(ms / 1000))).toBe(ms);
    expect(toMs(ms)).toBe(ms);
    for (const t of [null, undefined, "", "yesterday", Number.NaN, {}]) expect(toMs(t)).toBeNull();
  });

  it("writes the absolute time in three ways", () => {
    expect(formatDateTime("2025-06-01T12:00:05Z")).toBe("2025-06-01 12:00:05");
    expect(formatDateTime(1_748_779_205)).toBe("2025-06-01 12:00:05");
    expect(formatDateTime(null)).toBe("—");
    expect(formatDateTime("not a time")).toBe("—");
    expect(formatClock(Date.UTC(2025, 5, 1, 9, 3, 7))).toBe("09:03:07");
    expect(formatUtc("2025-06-01T12:00:05+02:00")).toBe("1 Jun 2025, 10:00:05 UTC");
    expect(formatUtc(undefined)).toBe("—");
  });
});

describe("formatPercent", () => {
  it("has one decimal unless told otherwise", () => {
    expect(formatPercent(42)).toBe("42.0 %");
    expect(formatPercent(3.14159, 2)).toBe("3.14 %");
    expect(formatPercent(null)).toBe("—");
  });
});
