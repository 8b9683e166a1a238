import { describe, expect, it } from "vitest";
import { ApiError } from "../src/errors.js";
import { UID_BLOCK } from "../src/runtime/host.js";
import { allocateUid } from "../src/services/sandboxes/uid-pool.js";

describe("allocateUid", () => {
  const base = 200_000;

  it("hands out the lowest free uid of the block", () => {
    expect(allocateUid(base, [])).toBe(base);
    expect(allocateUid(base, [base, base + 1, base + 3])).toBe(base + 2);
  });

  it("never hands out the block's last uid (template builds run as it)", () => {
    const all = Array.from({ length: UID_BLOCK - 1 }, (_, i) => base + i);
    let caught: unknown;
    try {
      allocateUid(base, all);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect((caught as ApiError).code).toBe("fleet_full");
    expect(allocateUid(base, all.slice(1))).toBe(base);
  });
});
