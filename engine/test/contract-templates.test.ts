import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, target, type EngineHandle } from "./helpers/engine.js";
import { followLogs, waitBuilt, type Json } from "./helpers/templates.js";

/**
 * Custom templates over HTTP (/v1/templates, GET /v1/templates/:id/logs, GET /v1/base-images). Runs against the local engine, or any v1 server
 * with ORKESTR_API_URL and ORKESTR_API_KEY set; checks only the local engine can make are skipped there.
 */
let e: EngineHandle;
const templates: string[] = [];
const sandboxes: string[] = [];
const suffix = Date.now().toString(36);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

beforeAll(async () => {
  e = await target();
});
afterAll(async () => {
  for (const id of sandboxes) await e.api("DELETE", `/sandboxes/${id}`).catch(() => undefined);
  for (const id of templates) await e.api("DELETE", `/templates/${id}`).catch(() => undefined);
  await e?.stop();
});

describe("templates contract", () => {
  it("rejects bad recipes with {detail, code}: 422, 404 base_image_not_found", async () => {
    const cases: [unknown, number, string][] = [
      [{}, 422, "validation_error"],
      [{ name: "x", base_image: "debian-12", steps: "echo hi" }, 422, "validation_error"],
      [{ name: "x", base_image: "debian-12", steps: [42] }, 422, "validation_error"],
      [{ name: "", base_image: "debian-12", steps: [] }, 422, "validation_error"],
      [{ name: `nope-${suffix}`, base_image: "windows-95", steps: [] }, 404, "base_image_not_found"],
    ];
    for (const [body, status, code] of cases) {
      const r = await e.api("POST", "/templates", body);
      expect({ body, status: r.status, code: r.body?.code }).toEqual({ body, status, code });
      expect(r.body.detail).toBeTruthy();
    }
  });

  it("404 template_not_found for unknown ids, on the template and its logs", async () => {
    for (const p of ["/templates/tmpl_00000000000000000000000000", "/templates/tmpl_00000000000000000000000000/logs"]) {
      const r = await e.api("GET", p);
      expect([r.status, r.body.code]).toEqual([404, "template_not_found"]);
    }
    const s = await e.api("POST", "/sandboxes", { template: "tmpl_00000000000000000000000000" });
    expect([s.status, s.body.code]).toEqual([404, "template_not_found"]);
  });

  it("lists the built-in base images with include_builtin=true", async () => {
    const r = await e.api("GET", "/templates?include_builtin=true");
    expect(r.status).toBe(200);
    const builtin = (r.body as Json[]).filter((t) => t.builtin === true);
    expect(builtin.map((t) => t.id)).toEqual(expect.arrayContaining(["python-3.12", "node-22", "debian-12"]));
    for (const t of builtin) expect(t.status).toBe("ready");
    const plain = await e.api("GET", "/templates");
    expect((plain.body as Json[]).some((t) => t.builtin === true)).toBe(false);
  });

  it("builds a template: 202 queued/building, ready with size, logs, sandboxes see its files; immutable; 409 on a taken name; 204 delete", async () => {
    const name = `ct-${suffix}`;
    const steps = ["mkdir -p /opt/ct && echo contract-ok > /opt/ct/marker", "echo built"];
    const r = await e.api("POST", "/templates", { name, base_image: "python-3.12", steps });
    expect(r.status).toBe(202);
    templates.push(r.body.id);
    expect(r.body).toMatchObject({
      name,
      base_image: "python-3.12",
      steps,
      size_mb: null,
      error: null,
      ready_at: null,
    });
    expect(r.body.id).toMatch(/^tmpl_/);
    expect(["queued", "building"]).toContain(r.body.status);
    expect(r.body.created_at).toMatch(ISO);

    const taken = await e.api("POST", "/templates", { name, base_image: "python-3.12", steps: [] });
    expect([taken.status, taken.body.code]).toEqual([409, "template_name_taken"]);

    const { frames } = await followLogs(e, r.body.id, "", 120_000);
    expect(frames.at(-1)).toMatchObject({ is_final: true, status: "ready" });
    const ready = await waitBuilt(e, r.body.id, 120_000);
    expect(ready.status).toBe("ready");
    expect(typeof ready.size_mb).toBe("number");
    expect(ready.ready_at).toMatch(ISO);
    expect((await e.api("GET", `/templates/${name}`)).body.id).toBe(r.body.id);
    expect((await e.api("GET", "/templates")).body.map((t: Json) => t.id)).toContain(r.body.id);

    const logs = await e.api("GET", `/templates/${r.body.id}/logs`);
    expect(logs.status).toBe(200);
    expect(logs.body).toMatchObject({ template_id: r.body.id, status: "ready", done: true });
    expect(
      logs.body.lines.some((l: Json) => l.stream === "stdout" && l.data.includes("built") && l.step_index === 1),
    ).toBe(true);
    for (const l of logs.body.lines)
      expect(Object.keys(l).sort()).toEqual(["data", "seq", "step_index", "stream", "t"]);

    const patch = await e.api("PATCH", `/templates/${r.body.id}`, { steps: [] });
    expect([404, 405]).toContain(patch.status);

    const sbx = await createSandbox(e, { template: r.body.id });
    sandboxes.push(sbx);
    expect((await exec(e, sbx, "cat /opt/ct/marker")).stdout).toBe("contract-ok\n");

    expect((await e.api("DELETE", `/templates/${r.body.id}`)).status).toBe(204);
    expect((await e.api("GET", `/templates/${r.body.id}`)).status).toBe(404);
  });

  it.runIf(!process.env.ORKESTR_API_URL)(
    "the limits report max_templates and the engine's template count",
    async () => {
      const limits = (await e.api("GET", "/sandboxes/limits")).body;
      expect(limits.max_templates).toBe(15);
      expect(limits.templates).toBe((await e.api("GET", "/templates")).body.length);
    },
  );
});
