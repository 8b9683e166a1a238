import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { renderApiMarkdown } from "../api-docs.js";
import { startInProcessEngine } from "../in-process.js";
import { openApiDocument } from "../openapi.js";

/**
 * `npm run openapi`: writes docs/openapi.json (the engine's OpenAPI 3.1 document, from its route
 * schemas) and docs/api.md (the same, as a page). engine/test/inject/openapi.test.ts fails when
 * the committed files and the routes drift.
 */
const root = fileURLToPath(new URL("../../..", import.meta.url));
const e = await startInProcessEngine();
try {
  const doc = openApiDocument(e.engine.app);
  fs.writeFileSync(path.join(root, "docs/openapi.json"), JSON.stringify(doc, null, 2) + "\n");
  fs.writeFileSync(path.join(root, "docs/api.md"), renderApiMarkdown(doc));
  console.error(`wrote docs/openapi.json and docs/api.md (${Object.keys(doc.paths ?? {}).length} paths)`);
} finally {
  await e.close();
}
