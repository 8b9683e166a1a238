import { describe, expect, it } from "vitest";
import { streamFormat } from "../src/routes/exec.js";

describe("streamFormat", () => {
  it("follows q-values, then order, and ignores other types", () => {
    expect(streamFormat(undefined)).toBeNull();
    expect(streamFormat("application/json")).toBeNull();
    expect(streamFormat("text/event-stream")).toBe("sse");
    expect(streamFormat("application/x-ndjson")).toBe("ndjson");
    expect(streamFormat("text/event-stream, application/x-ndjson;q=0.9")).toBe("sse");
    expect(streamFormat("text/event-stream;q=0.5, application/x-ndjson")).toBe("ndjson");
    expect(streamFormat("application/x-ndjson, text/event-stream")).toBe("ndjson");
    expect(streamFormat("text/event-stream;q=0")).toBeNull();
  });
});
