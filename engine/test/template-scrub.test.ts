import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enginePath, startEngine, type EngineHandle } from "./helpers/engine.js";
import { createTemplate, waitBuilt } from "./helpers/templates.js";

/**
 * After a build the engine, as root, empties the caches the build left in its layer (/var/tmp,
 * /var/cache/apt/archives, /var/lib/apt/lists, /root/.cache), and deleting a template removes the
 * layer. The layer is the build's own writing: a step that replaces /var (or /var/lib, or
 * /root/.cache) with a symlink to a host directory made the engine empty that host directory
 * (security issue, item 4). Here the symlinks point at canary directories this test made.
 */

function layerPath(e: EngineHandle, id: string, ...rel: string[]): string {
  return enginePath(e, path.join(e.dataDir!, "engine", "templates", id, "layer", ...rel));
}

describe("the post-build scrub", () => {
  let e: EngineHandle;
  /** Host directories a build points its /var (or /var/lib, /root/.cache) at; the scrub must not touch them. */
  const canary = fs.mkdtempSync(path.join(os.tmpdir(), "baton-canary-"));
  const files = ["tmp/keep", "cache/apt/archives/keep.deb", "lib/apt/lists/keep", "dotcache/keep", "apt/lists/keep"];
  const tree = (dir: string): string[] =>
    fs
      .readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => path.relative(canary, path.join(d.parentPath, d.name)))
      .sort();

  beforeAll(async () => {
    fs.chmodSync(canary, 0o755);
    for (const f of files) {
      fs.mkdirSync(path.dirname(path.join(canary, f)), { recursive: true });
      fs.writeFileSync(path.join(canary, f), "canary\n");
    }
    e = await startEngine();
  });
  afterAll(async () => {
    await e?.stop();
    fs.rmSync(canary, { recursive: true, force: true });
  });

  it("never follows a symlink the build planted, and still empties the caches the build really wrote", async () => {
    // /var itself a symlink (the paths to scrub run through it), and /root/.cache one as the last component.
    const whole = await createTemplate(e, {
      name: "var-symlink",
      steps: [`rm -rf /var && ln -s ${canary} /var && ln -s ${canary}/dotcache /root/.cache`],
    });
    // A real /var whose lib/ is a symlink; the caches it really wrote go as before.
    const partial = await createTemplate(e, {
      name: "var-lib-symlink",
      steps: [
        `mkdir -p /var/cache/apt/archives /var/tmp /root/.cache/pip && echo deb > /var/cache/apt/archives/x.deb && echo junk > /var/tmp/junk && echo c > /root/.cache/pip/c && rm -rf /var/lib && ln -s ${canary} /var/lib`,
      ],
    });
    const built = [await waitBuilt(e, whole.id), await waitBuilt(e, partial.id)];
    for (const t of built) expect(t.status, JSON.stringify(t.error)).toBe("ready");
    expect(tree(canary)).toEqual([...files].sort());

    expect(fs.readlinkSync(layerPath(e, whole.id, "root", "var"))).toBe(canary);
    for (const d of ["var/cache/apt/archives", "var/tmp", "root/.cache"])
      expect(fs.readdirSync(layerPath(e, partial.id, "root", d)), d).toEqual([]);
    expect(fs.readlinkSync(layerPath(e, partial.id, "root", "var", "lib"))).toBe(canary);

    // Deleting the templates removes the links, never what they point at.
    for (const t of built) expect((await e.api("DELETE", `/templates/${t.id}`)).status).toBe(204);
    for (const t of built)
      expect(fs.existsSync(enginePath(e, path.join(e.dataDir!, "engine", "templates", t.id)))).toBe(false);
    expect(tree(canary)).toEqual([...files].sort());
  });
});
