import { describe, expect, it } from "vitest";
import {
  attachVolumeCode,
  createVolumeCode,
  deleteVolumeCode,
  moveVolumeCode,
  updateVolumeCode,
} from "../../components/volumes/volume-code";
import { HOSTED_API } from "../../lib/code/snippet";

describe("volume snippets", () => {
  it("create: the SDK's Volume.create with the name first, curl with an Idempotency-Key", () => {
    const s = createVolumeCode({ name: "datasets", size_gb: 50, region: "hel1", max_lifetime_hours: 6 });
    expect(s.python).toContain('Volume.create("datasets", size_gb=50, region="hel1", max_lifetime_hours=6)');
    expect(s.javascript).toContain('Volume.create("datasets", { sizeGb: 50, region: "hel1", maxLifetimeHours: 6 })');
    expect(s.curl).toContain(`curl -X POST "${HOSTED_API}/v1/volumes"`);
    expect(s.curl).toContain("Idempotency-Key");
    expect(s.curl).toContain('"size_gb": 50');
    for (const code of Object.values(s)) expect(code).not.toMatch(/Bearer [^$]/);
  });

  it("clearing a lifetime keeps the null in every language", () => {
    const s = updateVolumeCode("vol_1", { max_lifetime_days: null });
    expect(s.python).toContain('Volume.update("vol_1", max_lifetime_days=None)');
    expect(s.javascript).toContain('Volume.update("vol_1", { maxLifetimeDays: null })');
    expect(s.curl).toContain("-X PATCH");
    expect(s.curl).toContain('"max_lifetime_days": null');
  });

  it("grow, move and delete address the volume by id on the connection's base URL", () => {
    const base = "http://127.0.0.1:8787/v1";
    expect(updateVolumeCode("vol_1", { size_gb: 20 }, base).curl).toContain('"http://127.0.0.1:8787/v1/volumes/vol_1"');
    expect(updateVolumeCode("vol_1", { size_gb: 20 }, base).python).toContain("point the SDK's base URL there");
    const move = moveVolumeCode("vol_1", "hel1", base);
    expect(move.python).toContain('Volume.move("vol_1", "hel1")');
    expect(move.curl).toContain('"http://127.0.0.1:8787/v1/volumes/vol_1/move"');
    expect(move.javascript).toContain("// The move runs in the background");
    const del = deleteVolumeCode("vol_1");
    expect(del.python).toContain('Volume.delete("vol_1")');
    expect(del.curl).toContain(`curl -X DELETE "${HOSTED_API}/v1/volumes/vol_1"`);
  });

  it("attach: Sandbox.create with the volume's name", () => {
    const s = attachVolumeCode("my-cache");
    expect(s.python).toContain('Sandbox.create(volume="my-cache")');
    expect(s.javascript).toContain('Sandbox.create({ volume: "my-cache" })');
    expect(s.curl).toContain('"volume": "my-cache"');
  });
});
