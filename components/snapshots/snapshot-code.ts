// Each snapshot action as code (Python SDK, JS SDK, curl), built from lib/code/snippet.ts. Never
// with a token: the SDKs and curl read ORKESTR_API_KEY from the environment. A fork is a sandbox
// create with `snapshot`: one child is exactly the create form's code (request-code.ts); N children
// are that request N times.

import { apiUrl, baseUrlNote, curlRequest, HOSTED_API, str, type Snippets } from "../../lib/code/snippet";
import type { CreateSandboxBody } from "../../lib/orkestr/schemas/sandboxes";
import { path } from "../../lib/orkestr/path";
import { curlCode, javascriptCode, pythonCode } from "../sandboxes/create/request-code";

const PY_HEAD = "# The API key comes from ORKESTR_API_KEY.\n";
const JS_HEAD = "// The API key comes from ORKESTR_API_KEY.\n";

/** Take a named snapshot of a running sandbox (it keeps running). */
export function createSnapshotCode(sandboxId: string, name: string, baseUrl: string = HOSTED_API): Snippets {
  return {
    python: [
      "from orkestr import Sandbox\n\n",
      PY_HEAD,
      baseUrlNote(baseUrl, "#"),
      `sbx = Sandbox.get(${str(sandboxId)})\n`,
      `snap = sbx.snapshot(name=${str(name)})  # the sandbox keeps running\n`,
      "print(snap.id, snap.size_mb)\n",
    ].join(""),
    javascript: [
      'import { Sandbox } from "orkestr";\n\n',
      JS_HEAD,
      baseUrlNote(baseUrl, "//"),
      `const sbx = await Sandbox.get(${str(sandboxId)});\n`,
      `const snap = await sbx.snapshot({ name: ${str(name)} }); // the sandbox keeps running\n`,
      "console.log(snap.id, snap.sizeMb);\n",
    ].join(""),
    curl: curlRequest({
      method: "POST",
      url: apiUrl(baseUrl, path`/v1/sandboxes/${sandboxId}/snapshots` as `/v1/${string}`),
      body: { name },
      idempotent: true,
    }),
  };
}

/** Delete a snapshot (forks already made keep their files). */
export function deleteSnapshotCode(snapshotId: string, baseUrl: string = HOSTED_API): Snippets {
  return {
    python: [
      "from orkestr import Snapshot\n\n",
      PY_HEAD,
      baseUrlNote(baseUrl, "#"),
      `Snapshot.delete(${str(snapshotId)})\n`,
    ].join(""),
    javascript: [
      'import { Snapshot } from "orkestr";\n\n',
      JS_HEAD,
      baseUrlNote(baseUrl, "//"),
      `await Snapshot.delete(${str(snapshotId)});\n`,
    ].join(""),
    curl: curlRequest({ method: "DELETE", url: apiUrl(baseUrl, path`/v1/snapshots/${snapshotId}` as `/v1/${string}`) }),
  };
}

/** List the account's snapshots. */
export function listSnapshotsCode(baseUrl: string = HOSTED_API): Snippets {
  return {
    python: [
      "from orkestr import Snapshot\n\n",
      PY_HEAD,
      baseUrlNote(baseUrl, "#"),
      "for snap in Snapshot.list():\n",
      "    print(snap.id, snap.name, snap.sandbox_id, snap.size_mb)\n",
    ].join(""),
    javascript: [
      'import { Snapshot } from "orkestr";\n\n',
      JS_HEAD,
      baseUrlNote(baseUrl, "//"),
      "for (const snap of await Snapshot.list()) {\n",
      "  console.log(snap.id, snap.name, snap.sandboxId, snap.sizeMb);\n",
      "}\n",
    ].join(""),
    curl: curlRequest({ method: "GET", url: apiUrl(baseUrl, "/v1/snapshots") }),
  };
}

/**
 * Fork `count` children with the same create body (which holds `snapshot`). One child is the create
 * form's snippet as is; more wrap that one create in a loop, so env values are still read from the
 * environment by name and never written out.
 */
export function forkCode(body: CreateSandboxBody, count: number, baseUrl: string = HOSTED_API): Snippets {
  const one = {
    python: pythonCode(body, baseUrl),
    javascript: javascriptCode(body, baseUrl),
    curl: curlCode(body, baseUrl),
  };
  if (count <= 1) return one;
  return {
    python: one.python
      .replace(/^sbx = (Sandbox\.create\([\s\S]*?\n?\))\n/m, (_, call: string) => {
        const indented = call.replace(/\n/g, "\n    ");
        return `children = [\n    ${indented}\n    for _ in range(${count})\n]\n`;
      })
      .replace("print(sbx.id, sbx.status)\n", "for sbx in children:\n    print(sbx.id, sbx.status)\n"),
    javascript: one.javascript
      .replace(/^const sbx = await (Sandbox\.create\([\s\S]*?\n?\}\));\n/m, (_, call: string) => {
        const indented = call.replace(/\n/g, "\n  ");
        return `const children = await Promise.all(\n  Array.from({ length: ${count} }, () =>\n    ${indented.replace(/\n/g, "\n  ")},\n  ),\n);\n`;
      })
      .replace("console.log(sbx.id, sbx.status);\n", "for (const sbx of children) console.log(sbx.id, sbx.status);\n"),
    // Each iteration is its own request with its own Idempotency-Key ($(uuidgen) runs each time).
    curl: `for i in $(seq 1 ${count}); do\n${one.curl}done\n`,
  };
}
