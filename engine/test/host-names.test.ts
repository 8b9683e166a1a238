import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpaqueNames } from "../src/runtime/opaque-names.js";
import { createSandbox, startEngine, type EngineHandle } from "./helpers/engine.js";
import { hostRequest, previewHostOf, serveInSandbox } from "./helpers/previews.js";
import { hostProcesses } from "./helpers/procs.js";

/**
 * Issue 20, item 10: a public preview needs nothing but its sandbox's id, and every local user of
 * the machine can list /sys/fs/cgroup and read every process's command line. Sandbox groups were
 * named by the sandbox's id, and the holders', bwrap's and the relays' command lines named its
 * directory or socket (both named after the id).
 */

describe("OpaqueNames", () => {
  const names = new OpaqueNames(randomBytes(64));

  it("gives the same id the same name, hides it, and reads it back", () => {
    const id = "sbx_01M90SVDFQPCP7TCZFCDHA9AQ7";
    const name = names.encode(id);
    expect(names.encode(id)).toBe(name);
    expect(name).not.toContain(id.slice(4));
    expect(name.toLowerCase()).not.toContain(id.slice(4).toLowerCase());
    expect(names.decode(name)).toBe(id);
    expect(names.encode("sbx_01M90SVDFQPCP7TCZFCDHA9AQ8")).not.toBe(name);
  });

  it("reads back nothing of a name it did not make (another key's, a legacy id, a forged one)", () => {
    const id = "sbx_01M90SVDFQPCP7TCZFCDHA9AQ7";
    expect(new OpaqueNames(randomBytes(64)).decode(names.encode(id))).toBeNull();
    expect(names.decode(id)).toBeNull();
    const forged = names.encode(id).slice(0, -2) + "00";
    expect(names.decode(forged)).toBeNull();
  });
});

/** Every place on the host that any local user may read, searched for `needle` (case-insensitive). */
function worldReadableMentions(needle: string): string[] {
  const lower = needle.toLowerCase();
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const p = path.join(dir, entry.name);
      if (entry.name.toLowerCase().includes(lower)) found.push(p);
      if (depth < 8) walk(p, depth + 1);
    }
  };
  walk("/sys/fs/cgroup", 0);
  for (const p of hostProcesses())
    if (p.cmdline.toLowerCase().includes(lower)) found.push(`pid ${p.pid}: ${p.cmdline.slice(0, 200)}`);
  return found;
}

describe("sandbox ids on the host", () => {
  let e: EngineHandle;
  beforeAll(async () => {
    e = await startEngine();
  }, 60_000);
  afterAll(async () => {
    await e?.stop();
  });

  it("show in no cgroup name and no command line: sandboxes of every network, a terminal, a preview and a build", async () => {
    const ids: string[] = [];
    for (const network of ["off", "restricted", "open"]) ids.push(await createSandbox(e, { network }));
    const pty = await e.api("POST", `/sandboxes/${ids[0]}/pty`, {});
    expect(pty.status, pty.text).toBe(201);
    // Previews need a network (network "off" has none to serve on): the restricted one.
    await serveInSandbox(e, ids[1]!, 8000, "names");
    expect((await hostRequest(e, previewHostOf(e, ids[1]!, 8000))).status).toBe(200);
    const tmpl = await e.api("POST", "/templates", { name: "names", base_image: "debian-12", steps: ["sleep 5"] });
    expect(tmpl.status, tmpl.text).toBe(202);
    // The build runs now: its group and processes exist.
    await new Promise((r) => setTimeout(r, 1500));
    try {
      // Only the ULID part: the prefix ("sbx_") is in every sandbox's name.
      const mentions = [...ids, pty.body.id as string, tmpl.body.id as string].flatMap((id) =>
        worldReadableMentions(id.slice(id.indexOf("_") + 1)),
      );
      expect(mentions).toEqual([]);
    } finally {
      await e.api("DELETE", `/templates/${tmpl.body.id}`);
    }
  }, 90_000);
});
