import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { newRow } from "../../components/sandboxes/create/create-request";
import {
  buildTemplateRequest,
  nextName,
  parseSteps,
  stateFrom,
} from "../../components/templates/create/template-request";
import { createTemplateCode, deleteTemplateCode, followLogCode } from "../../components/templates/template-code";
import type { Template } from "../../lib/orkestr/schemas/templates";

describe("the template form's request", () => {
  it("takes one step per line and skips blank lines", () => {
    expect(parseSteps("apt-get update\n\n   \npip install x  \r\necho done")).toEqual([
      "apt-get update",
      "pip install x",
      "echo done",
    ]);
  });

  it("names each mistake at its field, as the engine would refuse it", () => {
    const bad = buildTemplateRequest({
      name: "-nope",
      baseImage: "",
      steps: Array.from({ length: 101 }, (_, i) => `echo ${i}`).join("\n"),
      env: [newRow("1BAD", "x"), newRow("", "orphan value"), newRow("OK", "1"), newRow("OK", "2")],
    });
    expect(Object.keys(bad.errors)).toEqual(expect.arrayContaining(["base_image", "name", "steps"]));
    expect(
      Object.entries(bad.errors)
        .filter(([k]) => k.startsWith("env."))
        .map(([, v]) => v),
    ).toEqual([
      "Names are letters, digits and _, and do not start with a digit.",
      "Give this value a name.",
      '"OK" is already set above.',
    ]);
    expect(buildTemplateRequest({ name: "tmpl_x", baseImage: "debian-12", steps: "", env: [] }).errors.name).toMatch(
      /tmpl_/,
    );
  });

  it("sends name, base image, steps and env (only when there is some)", () => {
    const ok = buildTemplateRequest({
      name: " web ",
      baseImage: "python-3.12",
      steps: "pip install flask\n",
      env: [newRow()],
    });
    expect(ok.errors).toEqual({});
    expect(ok.body).toEqual({ name: "web", base_image: "python-3.12", steps: ["pip install flask"] });
    const withEnv = buildTemplateRequest({ name: "w", baseImage: "b", steps: "", env: [newRow("TOKEN", "s3cret")] });
    expect(withEnv.body.env).toEqual({ TOKEN: "s3cret" });
  });

  it("Edit prefills from the template with a free name, its steps, and its env names without values", () => {
    const t = {
      id: "tmpl_1",
      name: "web",
      base_image: "node-22",
      steps: ["npm i -g pnpm", "echo ok"],
      env_keys: ["NPM_TOKEN"],
    } as unknown as Template;
    const s = stateFrom(t, new Set(["web", "web-2"]), "python-3.12");
    expect(s).toMatchObject({ name: "web-3", baseImage: "node-22", steps: "npm i -g pnpm\necho ok" });
    expect(s.env.map((r) => [r.key, r.value])).toEqual([["NPM_TOKEN", ""]]);
    expect(nextName("web-9", new Set())).toBe("web-10");
    expect(stateFrom(null, new Set(), "python-3.12")).toMatchObject({ name: "", baseImage: "python-3.12", steps: "" });
  });
});

describe("template snippets", () => {
  it("curl create: steps with quotes and $ reach the server byte for byte; env values come from the shell", () => {
    const steps = ["echo 'it''s' \"$HOME\" `date`", "printf '%s\\n' done"];
    const code = createTemplateCode(
      { name: "t", base_image: "python-3.12", steps, envNames: [] },
      "http://127.0.0.1:8787",
    ).curl;
    const data = code.slice(code.indexOf("--data ") + "--data ".length).trim();
    const sent = execFileSync("bash", ["-c", `printf %s ${data}`], { encoding: "utf8" });
    expect(JSON.parse(sent)).toEqual({ name: "t", base_image: "python-3.12", steps });

    const withEnv = createTemplateCode(
      { name: "t", base_image: "b", steps: ["echo $X"], envNames: ["TOKEN"] },
      "http://127.0.0.1:8787",
    ).curl;
    const heredoc = withEnv.slice(withEnv.indexOf("<<EOF\n") + 6, withEnv.lastIndexOf("\nEOF"));
    const expanded = execFileSync("bash", ["-c", `TOKEN=s3cret; cat <<EOF\n${heredoc}\nEOF`], { encoding: "utf8" });
    expect(JSON.parse(expanded)).toEqual({ name: "t", base_image: "b", steps: ["echo $X"], env: { TOKEN: "s3cret" } });
  });

  it("never holds a token or an env value, and names the other server", () => {
    const all = [
      ...Object.values(
        createTemplateCode(
          { name: "t", base_image: "b", steps: ["true"], envNames: ["SECRET"] },
          "http://127.0.0.1:8787",
        ),
      ),
      ...Object.values(followLogCode("tmpl_1", "http://127.0.0.1:8787")),
      ...Object.values(deleteTemplateCode("tmpl_1", "http://127.0.0.1:8787")),
    ].join("\n");
    expect(all).not.toMatch(/ork_|Bearer [^$]/);
    expect(all).toContain('os.environ["SECRET"]');
    expect(all).toContain("This console talks to http://127.0.0.1:8787");
    expect(followLogCode("tmpl_1", "https://api.orkestr.eu").curl).toContain(
      '"https://api.orkestr.eu/v1/templates/tmpl_1/logs?follow=true"',
    );
  });
});
