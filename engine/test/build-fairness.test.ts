import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEngine, type EngineHandle } from "./helpers/engine.js";
import { createTemplate, waitBuilt, type Json } from "./helpers/templates.js";
import { freeSlot, nextBuild } from "../src/services/build-queue.js";

/**
 * Issue 20, item 6: builds are fair between accounts. Builds used to run one at a time, first come
 * first served, so one account's long build held every other account's in `queued` for as long
 * as it ran (up to the step timeout, per step).
 */

describe("nextBuild and freeSlot", () => {
  const rows: Record<string, { id: string; account_id: string }> = {
    a1: { id: "a1", account_id: "a" },
    a2: { id: "a2", account_id: "a" },
    b1: { id: "b1", account_id: "b" },
  };
  const row = (id: string) => rows[id];

  it("skips an account at its limit, keeping its builds' places", () => {
    const next = nextBuild(["a2", "b1"], { running: [{ account: "a", slot: 0 }], perAccount: 1, row });
    expect(next.row?.id).toBe("b1");
    expect(next.queue).toEqual(["a2"]);
  });

  it("takes the oldest build of an account under its limit, and drops ids no longer queued", () => {
    const next = nextBuild(["gone", "a1", "b1"], { running: [], perAccount: 1, row });
    expect(next.row?.id).toBe("a1");
    expect(next.queue).toEqual(["b1"]);
  });

  it("starts nothing while every queued account is at its limit", () => {
    const next = nextBuild(["a1", "a2"], { running: [{ account: "a", slot: 1 }], perAccount: 1, row });
    expect(next.row).toBeNull();
    expect(next.queue).toEqual(["a1", "a2"]);
  });

  it("hands out the lowest free slot, none when all are busy", () => {
    expect(freeSlot(2, [])).toBe(0);
    expect(freeSlot(2, [{ account: "a", slot: 0 }])).toBe(1);
    expect(freeSlot(2, [{ account: "a", slot: 1 }])).toBe(0);
    expect(
      freeSlot(2, [
        { account: "a", slot: 0 },
        { account: "b", slot: 1 },
      ]),
    ).toBeNull();
  });
});

describe("builds of two accounts on a real engine", () => {
  let e: EngineHandle;
  let other: string;
  beforeAll(async () => {
    e = await startEngine();
    other = await e.mint(["sandboxes:read", "sandboxes:write"], { account: "fairness-b" });
  }, 60_000);
  afterAll(async () => {
    await e?.stop();
  });

  const status = async (id: string, token = e.token): Promise<string> =>
    (await e.api("GET", `/templates/${id}`, undefined, { token })).body.status as string;

  it("one account's long build holds neither another account's build nor a second slot", async () => {
    const long = await createTemplate(e, { name: "a-long", steps: ["sleep 60"] });
    const second = await createTemplate(e, { name: "a-second", steps: ["true"] });
    const r = await e.api(
      "POST",
      "/templates",
      { name: "b-quick", base_image: "debian-12", steps: ["true"] },
      { token: other },
    );
    expect(r.status, r.text).toBe(202);
    try {
      // B's build finishes while A's first still runs; A's second waits for A's own slot.
      const quick = await waitBuiltAs(e, r.body.id as string, other, 30_000);
      expect(quick.status).toBe("ready");
      expect(await status(long.id)).toBe("building");
      expect(await status(second.id)).toBe("queued");
      // Once A's long build ends (deleted here), A's next one runs.
      expect((await e.api("DELETE", `/templates/${long.id}`)).status).toBe(204);
      expect((await waitBuilt(e, second.id, 30_000)).status).toBe("ready");
    } finally {
      await e.api("DELETE", `/templates/${long.id}`);
    }
  }, 90_000);
});

describe("a whole build's deadline", () => {
  it("fails a build whose steps each stay under the step timeout but together run too long", async () => {
    const e = await startEngine({ env: { ORKESTR_ENGINE_TEMPLATE_BUILD_TIMEOUT_S: "2" } });
    try {
      const t = await waitBuilt(e, (await createTemplate(e, { name: "slow", steps: ["sleep 1.5", "sleep 1.5"] })).id);
      expect(t.status).toBe("failed");
      expect(t.error.output).toMatch(/ran longer than 2 s/);
    } finally {
      await e.stop();
    }
  }, 60_000);
});

/** waitBuilt with another account's token. */
async function waitBuiltAs(e: EngineHandle, id: string, token: string, ms: number): Promise<Json> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await e.api("GET", `/templates/${id}`, undefined, { token });
    if (r.body.status === "ready" || r.body.status === "failed") return r.body;
    if (Date.now() > end) throw new Error(`template ${id} still ${r.body.status} after ${ms} ms`);
    await new Promise((res) => setTimeout(res, 100));
  }
}
