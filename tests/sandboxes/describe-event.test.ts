import { describe, expect, it } from "vitest";
import { describeEvent } from "../../components/sandboxes/detail/describe-event";
import { SCAN_COMMAND } from "../../lib/queries/previews";
import { SandboxEvent } from "../../lib/orkestr/schemas/events";

const event = (type: string, data: Record<string, unknown>): SandboxEvent =>
  SandboxEvent.parse({ id: "evt_1", t: "2026-12-03T08:00:00Z", type, data });

describe("describeEvent", () => {
  it("names the Previews tab's port scan instead of showing its shell one-liner", () => {
    const d = describeEvent(event("exec", { command: SCAN_COMMAND, exit_code: 0, duration_ms: 12 }));
    expect(d).toEqual({
      category: "exec",
      title: "Port scan (Baton's Previews tab)",
      detail: "exit 0 · 12 ms",
      failed: false,
    });
  });

  it("shows a user's command as it ran, failed when it exits non-zero", () => {
    const d = describeEvent(event("exec", { command: "cat /proc/net/tcp", exit_code: 1 }));
    expect(d.title).toBe("cat /proc/net/tcp");
    expect(d.failed).toBe(true);
  });

  it("keeps an unknown event type readable", () => {
    const d = describeEvent(event("volume.moved", { region: "eu-west" }));
    expect(d).toMatchObject({ category: "other", title: "volume.moved" });
    expect(d.detail).toContain("eu-west");
  });
});
