import { describe, expect, it } from "vitest";
import { rowRange } from "../../components/sandboxes/list/row-range";

describe("rowRange: the rows a fixed-row-height viewport shows", () => {
  it("covers the viewport plus overscan on both sides, clamped to the rows there are", () => {
    expect(rowRange(10_000, 44, 0, 440, 4)).toEqual({ first: 0, last: 13 });
    expect(rowRange(10_000, 44, 4400, 440, 4)).toEqual({ first: 96, last: 113 });
    expect(rowRange(10_000, 44, 44 * 9_990, 440, 4)).toEqual({ first: 9_986, last: 9_999 });
  });

  it("handles no rows, fewer rows than fit, and a scroll position left over from a longer list", () => {
    expect(rowRange(0, 44, 0, 440, 4)).toEqual({ first: 0, last: -1 });
    expect(rowRange(3, 44, 0, 440, 4)).toEqual({ first: 0, last: 2 });
    const stale = rowRange(5, 44, 44 * 5_000, 440, 4);
    expect(stale.first).toBeLessThanOrEqual(stale.last);
    expect(stale.last).toBe(4);
  });

  it("a partly visible row counts as visible", () => {
    expect(rowRange(100, 44, 22, 44, 0)).toEqual({ first: 0, last: 1 });
  });
});
