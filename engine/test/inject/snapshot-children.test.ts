import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../../src/store/tokens.js";
import { injectEngine, type InjectEngine } from "../helpers/inject.js";

/**
 * GET /v1/sandboxes?snapshot= (the console's fork tree): the sandboxes born from one named
 * snapshot, by its id or name, the account's own only, ended ones with an explicit status filter,
 * and still by id once the snapshot itself is deleted. Real sandboxes, driven in process.
 */
let e: InjectEngine;
beforeAll(async () => {
  e = await injectEngine();
});
afterAll(async () => {
  await e?.close();
});

const ids = (body: { id: string }[]) => body.map((s) => s.id).sort();

describe("the sandboxes forked from a snapshot", () => {
  it("lists a snapshot's children by id or name, and nothing else", async () => {
    const source = await e.call("POST", "/v1/sandboxes", { template: "debian-12" });
    expect(source.status, source.text).toBe(201);
    const snap = await e.call("POST", `/v1/sandboxes/${source.body.id}/snapshots`, { name: "tree-root" });
    expect(snap.status, snap.text).toBe(201);
    const other = await e.call("POST", `/v1/sandboxes/${source.body.id}/snapshots`, { name: "tree-other" });
    expect(other.status, other.text).toBe(201);

    const a = await e.call("POST", "/v1/sandboxes", { snapshot: snap.body.id });
    const b = await e.call("POST", "/v1/sandboxes", { snapshot: "tree-root" });
    const c = await e.call("POST", "/v1/sandboxes", { snapshot: other.body.id });
    for (const r of [a, b, c]) expect(r.status, r.text).toBe(201);

    const byId = await e.call("GET", `/v1/sandboxes?snapshot=${snap.body.id}`);
    expect(byId.status).toBe(200);
    expect(ids(byId.body)).toEqual(ids([a.body, b.body]));
    // Ids are matched in any case, as everywhere else.
    expect(ids((await e.call("GET", `/v1/sandboxes?snapshot=${snap.body.id.toLowerCase()}`)).body)).toEqual(
      ids([a.body, b.body]),
    );
    expect(ids((await e.call("GET", "/v1/sandboxes?snapshot=tree-root")).body)).toEqual(ids([a.body, b.body]));
    expect(ids((await e.call("GET", "/v1/sandboxes?snapshot=tree-other")).body)).toEqual([c.body.id]);
    // The source is no child of its own snapshot, and an unknown snapshot has none.
    expect((await e.call("GET", "/v1/sandboxes?snapshot=no-such-snapshot")).body).toEqual([]);
    // Pages like any list.
    const page = await e.call("GET", `/v1/sandboxes?snapshot=${snap.body.id}&limit=1`);
    expect(page.body).toHaveLength(1);
    expect(page.headers["x-next-cursor"]).toBeTruthy();

    // Ended children leave the default list, as every ended sandbox does, and come back with ?status.
    expect((await e.call("DELETE", `/v1/sandboxes/${a.body.id}`)).status).toBe(204);
    expect(ids((await e.call("GET", `/v1/sandboxes?snapshot=${snap.body.id}`)).body)).toEqual([b.body.id]);
    const all = await e.call("GET", `/v1/sandboxes?snapshot=${snap.body.id}&status=running,terminated`);
    expect(ids(all.body)).toEqual(ids([a.body, b.body]));

    // The children outlive their snapshot and are still found by the id they carry.
    expect((await e.call("DELETE", `/v1/snapshots/${snap.body.id}`)).status).toBe(204);
    const orphans = await e.call("GET", `/v1/sandboxes?snapshot=${snap.body.id}`);
    expect(ids(orphans.body)).toEqual([b.body.id]);
    expect(orphans.body[0].snapshot).toBe(snap.body.id);
  });

  it("another account's snapshot has no children here, by id or by name", async () => {
    const source = await e.call("POST", "/v1/sandboxes", { template: "debian-12" });
    const snap = await e.call("POST", `/v1/sandboxes/${source.body.id}/snapshots`, { name: "theirs" });
    expect(snap.status, snap.text).toBe(201);
    const child = await e.call("POST", "/v1/sandboxes", { snapshot: snap.body.id });
    expect(child.status, child.text).toBe(201);
    const { token } = mintToken(e.engine.ctx.db, ["sandboxes:read", "sandboxes:write"], { account: "elsewhere" });
    for (const ref of [snap.body.id, "theirs"]) {
      const r = await e.call("GET", `/v1/sandboxes?snapshot=${ref}`, undefined, { token });
      expect(r.status).toBe(200);
      expect(r.body).toEqual([]);
    }
  });

  it("a NUL or odd characters find nothing, never a 500", async () => {
    for (const ref of ["%00", "%27%20OR%201%3D1--", "snap_%25"]) {
      const r = await e.call("GET", `/v1/sandboxes?snapshot=${ref}`);
      expect(r.status, r.text).toBe(200);
      expect(r.body).toEqual([]);
    }
  });

  it("a snapshot reference that is too long is 422 naming the field", async () => {
    const r = await e.call("GET", `/v1/sandboxes?snapshot=${"x".repeat(129)}`);
    expect(r.status).toBe(422);
    expect(r.body.detail.map((d: { loc: string[] }) => d.loc.join("."))).toContain("query.snapshot");
  });
});
