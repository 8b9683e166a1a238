import { describe, expect, it } from "vitest";
import { cutMarker, cutUtf8 } from "./output-cut";

describe("cutUtf8", () => {
  it("keeps text within the limit whole", () => {
    expect(cutUtf8("hello", 5)).toEqual({ text: "hello", cutBytes: 0 });
  });

  it("cuts at the byte limit and says how many bytes were left out", () => {
    expect(cutUtf8("y\n".repeat(10), 6)).toEqual({ text: "y\ny\ny\n", cutBytes: 14 });
  });

  it("never splits a character: it steps back to the last whole one", () => {
    // "é" is 2 bytes, "€" 3: a limit inside either keeps the characters before it.
    expect(cutUtf8("aé", 2)).toEqual({ text: "a", cutBytes: 2 });
    expect(cutUtf8("€€", 4)).toEqual({ text: "€", cutBytes: 3 });
    expect(cutUtf8("€€", 6)).toEqual({ text: "€€", cutBytes: 0 });
  });
});

describe("cutMarker", () => {
  it("is empty when nothing was cut", () => {
    expect(cutMarker("stdout", { text: "x", cutBytes: 0 }, false)).toBe("");
  });

  it("says what was cut, by whom", () => {
    expect(cutMarker("stdout", { text: "x", cutBytes: 10 }, false)).toBe(
      "\n[output cut: 10 more bytes of stdout not shown (max_output_bytes)]",
    );
    expect(cutMarker("stderr", { text: "x", cutBytes: 0 }, true)).toBe(
      "\n[output cut: the sandbox had already cut stderr at 1 MiB]",
    );
  });
});
