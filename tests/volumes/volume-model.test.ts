import { describe, expect, it } from "vitest";
import {
  buildCreateBody,
  growProblem,
  lifetimeDeadline,
  lifetimeFields,
  lifetimeInputOf,
  lifetimeLabel,
  maxVolumeGb,
  moveOutcome,
  nameProblem,
  usedFraction,
  type CreateVolumeForm,
} from "../../components/volumes/volume-model";

const ctx = { maxGb: 50, regions: ["fsn1", "hel1"], existingNames: ["taken"] };
const form = (over: Partial<CreateVolumeForm> = {}): CreateVolumeForm => ({
  name: "cache",
  sizeGb: "10",
  region: "",
  lifetime: { unit: "none", amount: "7" },
  ...over,
});

describe("create form", () => {
  it("builds the API body: name and size, region and lifetime only when chosen", () => {
    expect(buildCreateBody(form(), ctx)).toEqual({ body: { name: "cache", size_gb: 10 }, errors: {} });
    expect(
      buildCreateBody(form({ name: " cache ", region: "hel1", lifetime: { unit: "hours", amount: "6" } }), ctx).body,
    ).toEqual({ name: "cache", size_gb: 10, region: "hel1", max_lifetime_hours: 6 });
    expect(buildCreateBody(form({ lifetime: { unit: "days", amount: "30" } }), ctx).body).toEqual({
      name: "cache",
      size_gb: 10,
      max_lifetime_days: 30,
    });
  });

  it("names each bad field and sends nothing", () => {
    const r = buildCreateBody(
      form({ name: "vol_x", sizeGb: "51", region: "mars", lifetime: { unit: "hours", amount: "25" } }),
      ctx,
    );
    expect(r.body).toBeNull();
    expect(r.errors).toEqual({
      name: 'A name may not start with "vol_": ids do.',
      size: "This plan allows volumes of at most 50 GiB.",
      region: "Not one of this API's regions (fsn1, hel1).",
      lifetime: "Hours are 1 to 24; for longer, count in days.",
    });
    expect(buildCreateBody(form({ name: "taken" }), ctx).errors.name).toBe('A volume named "taken" exists already.');
    expect(buildCreateBody(form({ sizeGb: "2.5" }), ctx).errors.size).toBe("A whole number of GiB, at least 1.");
    expect(buildCreateBody(form({ sizeGb: "0" }), ctx).errors.size).toBe("A whole number of GiB, at least 1.");
  });

  it("checks names as the API does", () => {
    expect(nameProblem("")).toBe("Name the volume.");
    expect(nameProblem("-x")).toMatch(/starting with a letter or digit/);
    expect(nameProblem("a b")).toMatch(/Letters, digits/);
    expect(nameProblem("a".repeat(64))).toBe("At most 63 characters.");
    expect(nameProblem("VOL_abc")).toMatch(/vol_/);
    expect(nameProblem("my-cache.v2_1")).toBeNull();
  });

  it("takes the plan's size cap, never above the contract's 100 GB", () => {
    expect(maxVolumeGb(20)).toBe(20);
    expect(maxVolumeGb(500)).toBe(100);
    expect(maxVolumeGb(null)).toBe(100);
  });
});

describe("grow", () => {
  it("refuses a smaller size with a sentence that says volumes only grow", () => {
    expect(growProblem(10, "5", 100)).toBe(
      "Volumes only grow: 5 GiB is smaller than its 10 GiB. To get a smaller one, create a new volume and copy what you need.",
    );
    expect(growProblem(10, "10", 100)).toBe("It is 10 GiB already: enter a larger size.");
    expect(growProblem(10, "101", 100)).toBe("This plan allows volumes of at most 100 GiB.");
    expect(growProblem(10, "x", 100)).toBe("A whole number of GiB.");
    expect(growProblem(10, "20", 100)).toBeNull();
  });
});

describe("lifetime", () => {
  it("sends hours or days, and a clear as null", () => {
    expect(lifetimeFields({ unit: "none", amount: "" })).toEqual({ ok: true, fields: { max_lifetime_days: null } });
    expect(lifetimeFields({ unit: "hours", amount: "24" })).toEqual({ ok: true, fields: { max_lifetime_hours: 24 } });
    expect(lifetimeFields({ unit: "days", amount: "3650" })).toEqual({ ok: true, fields: { max_lifetime_days: 3650 } });
    expect(lifetimeFields({ unit: "days", amount: "3651" })).toEqual({ ok: false, error: "Days are 1 to 3650." });
    expect(lifetimeFields({ unit: "hours", amount: "0" }).ok).toBe(false);
  });

  it("reads and words the volume's lifetime", () => {
    expect(lifetimeLabel({ max_lifetime_days: 7, max_lifetime_hours: 168 })).toBe("7 days");
    expect(lifetimeLabel({ max_lifetime_days: null, max_lifetime_hours: 6 })).toBe("6 hours");
    expect(lifetimeLabel({ max_lifetime_days: null, max_lifetime_hours: 1 })).toBe("1 hour");
    expect(lifetimeLabel({ max_lifetime_days: null, max_lifetime_hours: 48 })).toBe("2 days");
    expect(lifetimeLabel({ max_lifetime_days: null, max_lifetime_hours: null })).toBeNull();
    expect(lifetimeInputOf({ max_lifetime_days: 3, max_lifetime_hours: 72 })).toEqual({ unit: "days", amount: "3" });
    expect(lifetimeInputOf({ max_lifetime_hours: 5 })).toEqual({ unit: "hours", amount: "5" });
    expect(lifetimeInputOf({})).toEqual({ unit: "none", amount: "7" });
  });

  it("counts the deadline from the volume's creation", () => {
    const created = Date.UTC(2026, 0, 1);
    expect(lifetimeDeadline(created, { unit: "hours", amount: "2" })).toBe(created + 2 * 3_600_000);
    expect(lifetimeDeadline(created, { unit: "days", amount: "1" })).toBe(created + 24 * 3_600_000);
    expect(lifetimeDeadline(created, { unit: "none", amount: "1" })).toBeNull();
    expect(lifetimeDeadline(null, { unit: "days", amount: "1" })).toBeNull();
  });
});

describe("state", () => {
  it("measures use against the size (GB of 1024 MiB), clamped", () => {
    expect(usedFraction({ size_gb: 1, size_mb: 256 })).toBe(0.25);
    expect(usedFraction({ size_gb: 1, size_mb: 4096 })).toBe(1);
    expect(usedFraction({ size_gb: null, size_mb: 1 })).toBeNull();
  });

  it("follows a move to its end: arrived, rolled back, or the volume gone", () => {
    expect(moveOutcome({ status: "moving", region: "fsn1" }, "hel1")).toBe("moving");
    expect(moveOutcome({ status: "available", region: "hel1" }, "hel1")).toBe("moved");
    expect(moveOutcome({ status: "available", region: "fsn1" }, "hel1")).toBe("failed");
    expect(moveOutcome(undefined, "hel1")).toBe("gone");
  });
});
