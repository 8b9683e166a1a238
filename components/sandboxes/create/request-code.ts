// "Show code": one create request as Python SDK, JS SDK and curl, ready to copy. Never with a
// token: every snippet reads ORKESTR_API_KEY from the environment, as the SDKs do (seed 003). Env
// values are not written out either (they are often secrets): each snippet reads them from the
// environment of whoever runs it, by the same name.

import { baseUrlNote, camel, HOSTED_API, jsValue, pyValue, str, type CodeLanguage } from "../../../lib/code/snippet";
import type { CreateSandboxBody } from "../../../lib/orkestr/schemas/sandboxes";

export { HOSTED_API, type CodeLanguage };

/** The order the SDK README lists create's parameters in; anything else follows. */
const ORDER = [
  "template",
  "snapshot",
  "size",
  "network",
  "allow_domains",
  "timeout_seconds",
  "on_timeout",
  "auto_resume",
  "env",
  "metadata",
  "region",
  "volume",
  "preview_auth",
];

function entries(body: CreateSandboxBody): [string, unknown][] {
  const all = Object.entries(body).filter(([, v]) => v !== undefined && v !== null);
  return all.sort(
    ([a], [b]) => (ORDER.indexOf(a) === -1 ? 99 : ORDER.indexOf(a)) - (ORDER.indexOf(b) === -1 ? 99 : ORDER.indexOf(b)),
  );
}

export function pythonCode(body: CreateSandboxBody, baseUrl: string = HOSTED_API): string {
  const env = body.env && Object.keys(body.env).length ? body.env : null;
  const lines = entries(body).map(([k, v]) => {
    if (k === "env" && env)
      return `    env={${Object.keys(env)
        .map((name) => `${str(name)}: os.environ[${str(name)}]`)
        .join(", ")}},`;
    return `    ${k}=${pyValue(v)},`;
  });
  return [
    env ? "import os\n" : "",
    "from orkestr import Sandbox\n\n",
    "# The API key comes from ORKESTR_API_KEY.\n",
    baseUrlNote(baseUrl, "#"),
    lines.length ? `sbx = Sandbox.create(\n${lines.join("\n")}\n)\n` : "sbx = Sandbox.create()\n",
    "print(sbx.id, sbx.status)\n",
  ].join("");
}

export function javascriptCode(body: CreateSandboxBody, baseUrl: string = HOSTED_API): string {
  const env = body.env && Object.keys(body.env).length ? body.env : null;
  const lines = entries(body).map(([k, v]) => {
    if (k === "env" && env)
      return `  env: { ${Object.keys(env)
        .map((name) => `${str(name)}: process.env[${str(name)}]`)
        .join(", ")} },`;
    return `  ${camel(k)}: ${jsValue(v)},`;
  });
  return [
    'import { Sandbox } from "orkestr";\n\n',
    "// The API key comes from ORKESTR_API_KEY; the SDK sends these fields in snake_case.\n",
    baseUrlNote(baseUrl, "//"),
    lines.length
      ? `const sbx = await Sandbox.create({\n${lines.join("\n")}\n});\n`
      : "const sbx = await Sandbox.create({});\n",
    "console.log(sbx.id, sbx.status);\n",
  ].join("");
}

/** Escapes JSON text for an unquoted heredoc: only \, $ and ` are special there. */
function heredocEscape(text: string): string {
  return text.replace(/[\\$`]/g, (c) => `\\${c}`);
}

export function curlCode(body: CreateSandboxBody, baseUrl: string = HOSTED_API): string {
  const url = `${baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "")}/v1/sandboxes`;
  const head = [
    `curl -X POST ${str(url)} \\`,
    '  -H "Authorization: Bearer $ORKESTR_API_KEY" \\',
    '  -H "Content-Type: application/json" \\',
    '  -H "Idempotency-Key: $(uuidgen)" \\',
  ].join("\n");
  const envNames = body.env ? Object.keys(body.env) : [];
  const ordered = Object.fromEntries(entries(body));
  if (!envNames.length) {
    // No expansion wanted: a single-quoted body, with any ' in it closed, escaped and reopened.
    return `${head}\n  --data '${JSON.stringify(ordered, null, 2).replace(/'/g, "'\\''")}'\n`;
  }
  // Env values come from the shell: an unquoted heredoc expands "$NAME" and nothing else.
  // A marker with no character the heredoc treats specially, swapped for "${NAME}" after escaping.
  const marker = (name: string) => `__baton_env_${name}__`;
  const withMarkers = { ...ordered, env: Object.fromEntries(envNames.map((n) => [n, marker(n)])) };
  let text = heredocEscape(JSON.stringify(withMarkers, null, 2));
  for (const n of envNames) text = text.split(`"${marker(n)}"`).join(`"\${${n}}"`);
  return `# Export ${envNames.join(", ")} first: their values are read from your shell.\n${head}\n  --data-binary @- <<EOF\n${text}\nEOF\n`;
}

export function requestCode(language: CodeLanguage, body: CreateSandboxBody, baseUrl?: string): string {
  if (language === "python") return pythonCode(body, baseUrl);
  if (language === "javascript") return javascriptCode(body, baseUrl);
  return curlCode(body, baseUrl);
}
