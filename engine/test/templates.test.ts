import Database from "better-sqlite3";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, enginePath, exec, startEngine, type EngineHandle } from "./helpers/engine.js";
import { createTemplate, followLogs, waitBuilt, type Json } from "./helpers/templates.js";

/**
 * Custom templates on the local engine (issue 5): real builds in build sandboxes, real overlay
 * layers, sandboxes that see what the steps installed, and the lifecycle around them.
 */

let e: EngineHandle;
const sandboxes: string[] = [];

beforeAll(async () => {
  e = await startEngine({ env: { ORKESTR_ENGINE_TEMPLATE_STEP_TIMEOUT_S: "3", ORKESTR_ENGINE_KEEPALIVE_MS: "200" } });
});
afterAll(async () => {
  for (const id of sandboxes) await e.api("DELETE", `/sandboxes/${id}`).catch(() => undefined);
  await e?.stop();
});

async function sandbox(body: Record<string, unknown>): Promise<string> {
  const id = await createSandbox(e, body);
  sandboxes.push(id);
  return id;
}

/** What a template's step wrote, as the test expects a sandbox of it to see. */
const INSTALL_STEPS = [
  "mkdir -p /opt/x && echo from-template > /opt/x/data",
  "printf '#!/bin/sh\\necho tool-ok\\n' > /usr/local/bin/tool && chmod 755 /usr/local/bin/tool",
  'id -u > /opt/x/build-uid; echo "$HOME" > /opt/x/home; echo "$GREETING" > /opt/x/greeting',
  // What pip install does: a module into the runtime's own site-packages (the CPython prefix).
  "echo 'VALUE = 42' > \"$(python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')/tmplmod.py\"",
  "rm /usr/bin/yes",
  "echo installed; echo warning-on-stderr >&2",
];

function events(type: string): Json[] {
  const db = new Database(path.join(e.dataDir!, "engine", "engine.sqlite"), { readonly: true, fileMustExist: true });
  try {
    return (
      db.prepare("SELECT sandbox_id, data FROM events WHERE type = ? ORDER BY seq").all(type) as {
        sandbox_id: string | null;
        data: string;
      }[]
    ).map((r) => ({ sandbox_id: r.sandbox_id, ...JSON.parse(r.data) }));
  } finally {
    db.close();
  }
}

describe("a build whose step fails", () => {
  it("fails the template with the step index, exit code and output tail, and ends the SSE stream with it", async () => {
    const t = await createTemplate(e, {
      name: "fails",
      steps: ["echo first-ok", "echo to-stdout; echo boom >&2; exit 3", "echo never-runs"],
    });
    expect(t.id).toMatch(/^tmpl_/);
    expect(["queued", "building"]).toContain(t.status);
    const { frames, ended } = await followLogs(e, t.id);
    expect(ended).toBe(true);
    const final = frames.at(-1);
    expect(final).toMatchObject({
      is_final: true,
      status: "failed",
      error: { step_index: 1, step: "echo to-stdout; echo boom >&2; exit 3", exit_code: 3 },
    });
    expect(final.error.output).toContain("boom");
    expect(final.error.output).toContain("to-stdout");
    const lines = frames.slice(0, -1);
    expect(lines.some((l: Json) => l.stream === "stderr" && l.data === "boom\n" && l.step_index === 1)).toBe(true);
    expect(lines.some((l: Json) => l.data.includes("never-runs") && l.stream !== "system")).toBe(false);

    const got = await waitBuilt(e, t.id);
    expect(got).toMatchObject({ status: "failed", ready_at: null, size_mb: null, error: final.error });
    const create = await e.api("POST", "/sandboxes", { template: t.id });
    expect([create.status, create.body.code]).toEqual([409, "template_not_ready"]);
    // Nothing of the failed layer is kept.
    expect(fs.existsSync(enginePath(e, path.join(e.dataDir!, "engine", "templates", t.id)))).toBe(false);
  });

  it("a step past the step timeout is killed and fails the build (exit 124)", async () => {
    const t = await createTemplate(e, { name: "too-slow", steps: ["echo before; sleep 60"] });
    const done = await waitBuilt(e, t.id, 20_000);
    expect(done.status).toBe("failed");
    expect(done.error).toMatchObject({ step_index: 0, exit_code: 124 });
    expect(done.error.output).toContain("before");
    expect(done.error.output).toMatch(/timed out after 3 s/);
  });
});

describe("a ready template", () => {
  let tmpl: Json;
  beforeAll(async () => {
    const started = Date.now();
    tmpl = await createTemplate(e, {
      name: "tools",
      base_image: "python-3.12",
      steps: INSTALL_STEPS,
      env: { GREETING: "hello" },
    });
    tmpl = await waitBuilt(e, tmpl.id);
    console.log(
      `[templates.test] build of ${INSTALL_STEPS.length} steps took ${Date.now() - started} ms (created → ready, polled)`,
    );
  });

  it("is ready with its size, timestamps and no env values echoed", () => {
    expect(tmpl).toMatchObject({
      status: "ready",
      name: "tools",
      base_image: "python-3.12",
      steps: INSTALL_STEPS,
      error: null,
      env_keys: ["GREETING"],
    });
    expect(tmpl.size_mb).toBeGreaterThanOrEqual(0);
    expect(Date.parse(tmpl.ready_at)).toBeGreaterThanOrEqual(Date.parse(tmpl.created_at));
    expect(JSON.stringify(tmpl)).not.toContain("hello");
  });

  it("new sandboxes (by name or id) see what the steps installed, as the unprivileged user", async () => {
    const a = await sandbox({ template: "tools" });
    expect((await e.api("GET", `/sandboxes/${a}`)).body.template).toBe(tmpl.id);
    const r = await exec(
      e,
      a,
      "tool; cat /opt/x/data /opt/x/build-uid /opt/x/home /opt/x/greeting; python3 -c 'import tmplmod; print(tmplmod.VALUE)'; id -u; echo $GREETING; test -e /usr/bin/yes || echo yes-removed",
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("tool-ok\nfrom-template\n0\n/root\nhello\n42\n1000\nhello\nyes-removed\n");
    // The sandbox's workspace is its own, as with any template.
    expect((await exec(e, a, "pwd; touch /workspace/ok && echo w")).stdout).toBe("/workspace\nw\n");
  });

  it("sandboxes cannot change the template for each other, and the host never saw the build", async () => {
    const a = await sandbox({ template: tmpl.id });
    const b = await sandbox({ template: tmpl.id });
    const attempts = await exec(
      e,
      a,
      "echo evil > /opt/x/data; echo evil > /usr/local/bin/tool; rm -f /usr/local/bin/tool; mkdir /opt/y; touch /etc/evil; echo rc=$?",
    );
    expect(attempts.stderr).toMatch(/Read-only file system/);
    expect((await exec(e, b, "cat /opt/x/data; tool; ls /opt; test -e /etc/evil || echo no-evil")).stdout).toBe(
      "from-template\ntool-ok\nx\nno-evil\n",
    );
    // The build ran in its own root: the host's /usr is untouched.
    expect(fs.existsSync("/usr/local/bin/tool")).toBe(false);
    expect(fs.existsSync("/usr/bin/yes")).toBe(true);
    expect(fs.existsSync("/opt/x/data")).toBe(false);
    // A built-in image does not see the template's files.
    const plain = await sandbox({ template: "python-3.12" });
    expect(
      (await exec(e, plain, "test -e /usr/local/bin/tool || echo absent; test -e /usr/bin/yes && echo yes-present"))
        .stdout,
    ).toBe("absent\nyes-present\n");
  });

  it("records template.build_finished (no sandbox) with the template", () => {
    const finished = events("template.build_finished").filter((ev) => ev.template.id === tmpl.id);
    expect(finished).toHaveLength(1);
    expect(finished[0]).toMatchObject({ sandbox_id: null, template: { id: tmpl.id, status: "ready", name: "tools" } });
    const failed = events("template.build_finished").find((ev) => ev.template.name === "fails");
    expect(failed?.template).toMatchObject({ status: "failed", error: { step_index: 1, exit_code: 3 } });
  });

  it("its log pages by cursor, and follow replays from a cursor to the final frame", async () => {
    const all = (await e.api("GET", `/templates/${tmpl.id}/logs?limit=1000`)).body;
    expect(all).toMatchObject({ template_id: tmpl.id, status: "ready", done: true });
    expect(all.lines.map((l: Json) => l.seq)).toEqual(all.lines.map((_: Json, i: number) => i + 1));
    expect(all.lines.some((l: Json) => l.stream === "stdout" && l.data === "installed\n" && l.step_index === 5)).toBe(
      true,
    );
    expect(all.lines.some((l: Json) => l.stream === "stderr" && l.data === "warning-on-stderr\n")).toBe(true);
    for (const l of all.lines) expect(l.t).toMatch(/^\d{4}-\d{2}-\d{2}T/);

    const paged: Json[] = [];
    let cursor: number | undefined;
    for (let guard = 0; guard < 200; guard++) {
      const page = (await e.api("GET", `/templates/${tmpl.id}/logs?limit=3${cursor ? `&cursor=${cursor}` : ""}`)).body;
      paged.push(...page.lines);
      expect(page.lines.length).toBeLessThanOrEqual(3);
      if (page.done) break;
      expect(page.next_cursor).toBe(page.lines.at(-1).seq + 1);
      cursor = page.next_cursor;
    }
    expect(paged).toEqual(all.lines);

    const { frames, ended } = await followLogs(e, tmpl.id, "cursor=4");
    expect(ended).toBe(true);
    expect(frames.slice(0, -1)).toEqual(all.lines.filter((l: Json) => l.seq >= 4));
    expect(frames.at(-1)).toMatchObject({ is_final: true, status: "ready", error: null });
  });
});

describe("builds", () => {
  it("run one at a time, and a live follower gets lines as they come, then the final frame", async () => {
    const first = await createTemplate(e, { name: "slow-one", steps: ["echo early; sleep 1; echo late"] });
    const second = await createTemplate(e, { name: "after-it", steps: ["echo second"] });
    expect(second.status).toBe("queued");
    const follow = followLogs(e, first.id);
    const { frames, raw } = await follow;
    expect(raw).toContain(": keepalive");
    const data = frames.filter((f: Json) => f.stream === "stdout").map((f: Json) => f.data);
    expect(data).toEqual(["early\n", "late\n"]);
    expect(frames.at(-1)).toMatchObject({ is_final: true, status: "ready" });
    const a = await waitBuilt(e, first.id);
    const b = await waitBuilt(e, second.id);
    expect(b.status).toBe("ready");
    expect(Date.parse(b.started_at)).toBeGreaterThanOrEqual(Date.parse(a.finished_at));
  });

  it("deleting a template in use keeps its sandboxes working; its files go with the last of them", async () => {
    const t = await waitBuilt(
      e,
      (await createTemplate(e, { name: "doomed", steps: ["mkdir -p /opt/doomed && echo still-here > /opt/doomed/f"] }))
        .id,
    );
    expect(t.status).toBe("ready");
    const s1 = await sandbox({ template: "doomed" });
    const s2 = await sandbox({ template: "doomed" });
    const dir = enginePath(e, path.join(e.dataDir!, "engine", "templates", t.id));
    expect(fs.existsSync(path.join(dir, "layer"))).toBe(true);

    expect((await e.api("DELETE", `/templates/${t.id}`)).status).toBe(204);
    expect((await e.api("GET", `/templates/${t.id}`)).body.code).toBe("template_not_found");
    expect((await e.api("GET", "/templates")).body.map((x: Json) => x.id)).not.toContain(t.id);
    const again = await e.api("POST", "/sandboxes", { template: "doomed" });
    expect([again.status, again.body.code]).toEqual([404, "template_not_found"]);
    // The name is free again: a new template may take it.
    const successor = await createTemplate(e, { name: "doomed", steps: [] });
    expect(successor.id).not.toBe(t.id);

    expect((await exec(e, s1, "cat /opt/doomed/f")).stdout).toBe("still-here\n");
    expect((await e.api("DELETE", `/sandboxes/${s1}`)).status).toBe(204);
    expect((await exec(e, s2, "cat /opt/doomed/f")).stdout).toBe("still-here\n");
    expect(fs.existsSync(path.join(dir, "layer"))).toBe(true);
    expect((await e.api("DELETE", `/sandboxes/${s2}`)).status).toBe(204);
    expect(fs.existsSync(dir)).toBe(false);
    expect(fs.readFileSync(`/proc/${e.enginePid}/mountinfo`, "utf8")).not.toContain(t.id);
    await waitBuilt(e, successor.id);
    expect((await e.api("DELETE", `/templates/doomed`)).status).toBe(204);
  });

  it("deleting a template while it builds cancels the build and leaves nothing behind", async () => {
    const t = await createTemplate(e, { name: "cancelled", steps: ["sleep 2"] });
    await new Promise((r) => setTimeout(r, 300));
    expect((await e.api("DELETE", `/templates/${t.id}`)).status).toBe(204);
    const dir = enginePath(e, path.join(e.dataDir!, "engine", "templates", t.id));
    const end = Date.now() + 10_000;
    while (fs.existsSync(dir) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    expect(fs.existsSync(dir)).toBe(false);
    expect(fs.readFileSync(`/proc/${e.enginePid}/mountinfo`, "utf8")).not.toContain(t.id);
  });
});

describe("caps and restarts", () => {
  it("the free plan holds 5 templates: the 6th is 403 template_cap_reached until one is deleted", async () => {
    const free = await startEngine({ env: { ORKESTR_ENGINE_PLAN: "free" } });
    try {
      expect((await free.api("GET", "/sandboxes/limits")).body.max_templates).toBe(5);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await createTemplate(free, { name: `cap-${i}` })).id);
      const sixth = await free.api("POST", "/templates", { name: "cap-5", base_image: "debian-12", steps: [] });
      expect([sixth.status, sixth.body.code, sixth.body.max_templates]).toEqual([403, "template_cap_reached", 5]);
      expect((await free.api("DELETE", `/templates/${ids[0]}`)).status).toBe(204);
      expect((await free.api("POST", "/templates", { name: "cap-5", base_image: "debian-12", steps: [] })).status).toBe(
        202,
      );
      for (const id of ids.slice(1)) await waitBuilt(free, id);
    } finally {
      expect(await free.stop()).toBe(0);
    }
  });

  it("without user namespaces or cgroups (bwrap as root, rlimits) builds still work and stay capability-free", async () => {
    const degraded = await startEngine({ env: { ORKESTR_ENGINE_DISABLE: "userns,cgroups" } });
    try {
      const t = await waitBuilt(
        degraded,
        (
          await createTemplate(degraded, {
            name: "rootless-less",
            steps: ["grep CapEff /proc/self/status > /opt/caps; id -u >> /opt/caps"],
          })
        ).id,
      );
      expect(t.status).toBe("ready");
      const s = await createSandbox(degraded, { template: t.id });
      // Without user namespaces a build is not root at all: it runs as its slot's unprivileged
      // host uid (issue 20), which owns the base image's files through the idmapped layers.
      const builds = (await degraded.api("GET", "/sandboxes/limits")).body.isolation.builds;
      expect(builds.user).toBe("unprivileged");
      const [capLine, uid] = (await exec(degraded, s, "cat /opt/caps")).stdout.trim().split("\n");
      expect(capLine).toBe("CapEff:\t0000000000000000");
      expect(Number(uid)).toBe(Number((builds.host_uids as string).split("-")[1]));
      expect((await exec(degraded, s, "echo x > /opt/caps")).stderr).toMatch(/Read-only file system/);
    } finally {
      expect(await degraded.stop()).toBe(0);
    }
  });

  it("a restart keeps ready templates usable; a build cut off by a crash is failed with the reason", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-tmpl-restart-"));
    const a = await startEngine({ dataDir });
    let interruptedId: string;
    let readyId: string;
    try {
      readyId = (
        await waitBuilt(
          a,
          (
            await createTemplate(a, {
              name: "survivor",
              steps: [
                "printf '#!/bin/sh\\necho survived\\n' > /usr/local/bin/survivor; chmod +x /usr/local/bin/survivor",
              ],
            })
          ).id,
        )
      ).id;
      // A sandbox of it is running at shutdown: the view's mounts must be released cleanly.
      await createSandbox(a, { template: "survivor" });
      const shutdownBuild = await createTemplate(a, { name: "cut-by-shutdown", steps: ["sleep 30"] });
      await new Promise((r) => setTimeout(r, 500));
      expect(await a.stop("SIGTERM")).toBe(0);
      expect(a.log()).not.toMatch(/error|failed to/i);
      const tdir = path.join(dataDir, "engine", "templates");
      expect(fs.readdirSync(path.join(tdir, readyId)).sort()).toEqual(["layer"]);
      expect(fs.existsSync(path.join(tdir, shutdownBuild.id))).toBe(false);
      expect(fs.readdirSync(path.join(dataDir, "engine", "sbx"))).toEqual([]);

      const b = await startEngine({ dataDir });
      try {
        expect((await b.api("GET", `/templates/${shutdownBuild.id}`)).body).toMatchObject({
          status: "failed",
          error: { output: expect.stringMatching(/shut down during the build/) },
        });
        interruptedId = (await createTemplate(b, { name: "cut-by-crash", steps: ["sleep 30"] })).id;
        await new Promise((r) => setTimeout(r, 500));
        expect((await b.api("GET", `/templates/${interruptedId}`)).body.status).toBe("building");
        process.kill(b.enginePid!, "SIGKILL");
      } finally {
        await b.stop();
      }

      const c = await startEngine({ dataDir });
      try {
        const survivor = (await c.api("GET", "/templates/survivor")).body;
        expect(survivor).toMatchObject({ id: readyId, status: "ready" });
        const s = await createSandbox(c, { template: "survivor" });
        expect((await exec(c, s, "survivor")).stdout).toBe("survived\n");
        const cut = (await c.api("GET", `/templates/${interruptedId}`)).body;
        expect(cut.status).toBe("failed");
        expect(cut.error.output).toMatch(/engine restarted while this template was building/);
        expect(fs.existsSync(path.join(dataDir, "engine", "templates", interruptedId))).toBe(false);
      } finally {
        expect(await c.stop()).toBe(0);
      }
    } finally {
      await a.stop();
    }
  });
});
