// Each template action as code (Python SDK, JS SDK, curl), for components/ui/code-tabs.tsx. The SDK
// README documents no template calls by name: these follow its Volume and Snapshot classes
// (`Template.create(...)`, `Template.delete(id)`), and the curl lines are the contract's routes
// exactly. Env values are never written out (they are often secrets): every snippet reads each
// from the environment of whoever runs it, by the same name. No snippet holds a token.

import { apiUrl, baseUrlNote, curlRequest, jsOptions, pyKwargs, str, type Snippets } from "../../lib/code/snippet";

export interface TemplateDraft {
  name: string;
  base_image: string;
  steps: string[];
  /** Names only: their values come from the runner's environment. */
  envNames: string[];
}

const pyEnv = (names: string[]) => `{${names.map((n) => `${str(n)}: os.environ[${str(n)}]`).join(", ")}}`;
const jsEnv = (names: string[]) => `{ ${names.map((n) => `${str(n)}: process.env[${str(n)}]`).join(", ")} }`;

/** Multi-line SDK arguments: steps one per line read better than one long list. */
function pyArgs(d: TemplateDraft): string {
  const lines = [
    `    name=${str(d.name)},`,
    `    base_image=${str(d.base_image)},`,
    `    steps=[\n${d.steps.map((s) => `        ${str(s)},`).join("\n")}\n    ],`,
  ];
  if (d.envNames.length) lines.push(`    env=${pyEnv(d.envNames)},`);
  return lines.join("\n");
}

function jsArgs(d: TemplateDraft): string {
  const lines = [
    `  name: ${str(d.name)},`,
    `  baseImage: ${str(d.base_image)},`,
    `  steps: [\n${d.steps.map((s) => `    ${str(s)},`).join("\n")}\n  ],`,
  ];
  if (d.envNames.length) lines.push(`  env: ${jsEnv(d.envNames)},`);
  return lines.join("\n");
}

/** Escapes JSON text for an unquoted heredoc: only \, $ and ` are special there. */
const heredocEscape = (text: string) => text.replace(/[\\$`]/g, (c) => `\\${c}`);

function curlCreate(d: TemplateDraft, baseUrl: string): string {
  const body = { name: d.name, base_image: d.base_image, steps: d.steps };
  const url = apiUrl(baseUrl, "/v1/templates");
  if (!d.envNames.length) return curlRequest({ method: "POST", url, body, idempotent: true });
  // Env values come from the shell: an unquoted heredoc expands "${NAME}" and nothing else.
  const marker = (n: string) => `__baton_env_${n}__`;
  let text = heredocEscape(
    JSON.stringify({ ...body, env: Object.fromEntries(d.envNames.map((n) => [n, marker(n)])) }, null, 2),
  );
  for (const n of d.envNames) text = text.split(`"${marker(n)}"`).join(`"\${${n}}"`);
  return [
    `# Export ${d.envNames.join(", ")} first: their values are read from your shell.`,
    `curl -X POST ${str(url)} \\`,
    '  -H "Authorization: Bearer $ORKESTR_API_KEY" \\',
    '  -H "Content-Type: application/json" \\',
    '  -H "Idempotency-Key: $(uuidgen)" \\',
    `  --data-binary @- <<EOF\n${text}\nEOF\n`,
  ].join("\n");
}

/** POST /v1/templates: queue a build, then follow its log. */
export function createTemplateCode(d: TemplateDraft, baseUrl: string): Snippets {
  const env = d.envNames.length > 0;
  return {
    python: [
      env ? "import os\n" : "",
      "from orkestr import Template\n\n",
      "# The API key comes from ORKESTR_API_KEY.\n",
      baseUrlNote(baseUrl, "#"),
      `tmpl = Template.create(\n${pyArgs(d)}\n)\n`,
      "print(tmpl.id, tmpl.status)  # queued or building; ready when the build succeeds\n",
    ].join(""),
    javascript: [
      'import { Template } from "orkestr";\n\n',
      "// The API key comes from ORKESTR_API_KEY; the SDK sends these fields in snake_case.\n",
      baseUrlNote(baseUrl, "//"),
      `const tmpl = await Template.create({\n${jsArgs(d)}\n});\n`,
      "console.log(tmpl.id, tmpl.status);\n",
    ].join(""),
    curl: curlCreate(d, baseUrl),
  };
}

/** GET /v1/templates/{id}/logs?follow=true: the build log, live. */
export function followLogCode(id: string, baseUrl: string): Snippets {
  const url = `${apiUrl(baseUrl, "/v1/templates")}/${encodeURIComponent(id)}/logs?follow=true`;
  return {
    python: [
      "from orkestr import Template\n\n",
      baseUrlNote(baseUrl, "#"),
      `for line in Template.logs(${str(id)}, follow=True):\n`,
      '    print(line.data, end="")\n',
    ].join(""),
    javascript: [
      'import { Template } from "orkestr";\n\n',
      baseUrlNote(baseUrl, "//"),
      `for await (const line of Template.logs(${str(id)}, ${jsOptions({ follow: true })})) {\n`,
      "  process.stdout.write(line.data);\n}\n",
    ].join(""),
    curl: curlRequest({ method: "GET", url })
      .replace("curl ", "curl -N ")
      .replace('-H "Authorization', '-H "Accept: text/event-stream" \\\n  -H "Authorization'),
  };
}

/** POST /v1/sandboxes with the template. */
export function sandboxFromTemplateCode(id: string, baseUrl: string): Snippets {
  return {
    python: [
      "from orkestr import Sandbox\n\n",
      baseUrlNote(baseUrl, "#"),
      `sbx = Sandbox.create(${pyKwargs({ template: id })})\n`,
      "print(sbx.id, sbx.status)\n",
    ].join(""),
    javascript: [
      'import { Sandbox } from "orkestr";\n\n',
      baseUrlNote(baseUrl, "//"),
      `const sbx = await Sandbox.create(${jsOptions({ template: id })});\n`,
      "console.log(sbx.id, sbx.status);\n",
    ].join(""),
    curl: curlRequest({
      method: "POST",
      url: apiUrl(baseUrl, "/v1/sandboxes"),
      body: { template: id },
      idempotent: true,
    }),
  };
}

/** DELETE /v1/templates/{id}. */
export function deleteTemplateCode(id: string, baseUrl: string): Snippets {
  return {
    python: ["from orkestr import Template\n\n", baseUrlNote(baseUrl, "#"), `Template.delete(${str(id)})\n`].join(""),
    javascript: [
      'import { Template } from "orkestr";\n\n',
      baseUrlNote(baseUrl, "//"),
      `await Template.delete(${str(id)});\n`,
    ].join(""),
    curl: curlRequest({ method: "DELETE", url: `${apiUrl(baseUrl, "/v1/templates")}/${encodeURIComponent(id)}` }),
  };
}

/** GET /v1/templates?include_builtin=true. */
export function listTemplatesCode(baseUrl: string): Snippets {
  return {
    python: [
      "from orkestr import Template\n\n",
      baseUrlNote(baseUrl, "#"),
      "for t in Template.list(include_builtin=True):\n",
      "    print(t.id, t.name, t.status)\n",
    ].join(""),
    javascript: [
      'import { Template } from "orkestr";\n\n',
      baseUrlNote(baseUrl, "//"),
      `for (const t of await Template.list(${jsOptions({ include_builtin: true })})) {\n`,
      "  console.log(t.id, t.name, t.status);\n}\n",
    ].join(""),
    curl: curlRequest({ method: "GET", url: `${apiUrl(baseUrl, "/v1/templates")}?include_builtin=true` }),
  };
}
