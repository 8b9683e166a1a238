import { describe, expect, it } from "vitest";
import { ApiError } from "../src/errors.js";
import { BUILD_UIDS, buildUid, SANDBOX_UIDS, UID_BLOCK } from "../src/runtime/host.js";
import { allocateUid } from "../src/services/sandboxes/uid-pool.js";

describe("allocateUid", () => {
  const base = 200_000;

  it("hands out the lowest free uid of the block", () => {
    expect(allocateUid(base, [])).toBe(base);
    expect(allocateUid(base, [base, base + 1, base + 3])).toBe(base + 2);
  });

  it("never hands out the block's last uids (each template build slot runs as one of them)", () => {
    const all = Array.from({ length: SANDBOX_UIDS }, (_, i) => base + i);
    const builds = Array.from({ length: BUILD_UIDS }, (_, slot) => buildUid(base, slot));
    expect(builds.every((uid) => uid >= base + SANDBOX_UIDS && uid < base + UID_BLOCK)).toBe(true);
    expect(new Set(builds).size).toBe(BUILD_UIDS);
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
