import fs from "node:fs";
import { fileURLToPath } from "node:url";
import type { OpenAPIV3_1 } from "openapi-types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderApiMarkdown } from "../../src/api-docs.js";
import { openApiDocument } from "../../src/openapi.js";
import { injectEngine, type InjectEngine } from "../helpers/inject.js";

/**
 * The contract in the repo: docs/openapi.json (and its page, docs/api.md) is what the routes'
 * schemas generate. (tests/console/openapi-schemas.test.ts checks the console's response schemas
 * against the same committed document.) Run `npm run openapi` after changing a route.
 */
const docs = (f: string) => fileURLToPath(new URL(`../../../docs/${f}`, import.meta.url));
let e: InjectEngine;
let doc: OpenAPIV3_1.Document;
beforeAll(async () => {
  e = await injectEngine();
  doc = openApiDocument(e.engine.app);
});
afterAll(async () => {
  await e?.close();
});

describe("docs/openapi.json", () => {
  it("is what the routes generate (run `npm run openapi` after changing a route)", () => {
    const committed = JSON.parse(fs.readFileSync(docs("openapi.json"), "utf8")) as unknown;
    expect(committed).toEqual(doc);
    expect(fs.readFileSync(docs("api.md"), "utf8")).toBe(renderApiMarkdown(doc));
  });

  it("is served at GET /v1/openapi.json to a token holder", async () => {
    const r = await e.call("GET", "/v1/openapi.json");
    expect(r.status).toBe(200);
    expect(r.body).toEqual(doc);
    expect(r.body.openapi).toBe("3.1.0");
  });

  it("documents every /v1 route the engine serves", () => {
    const documented = new Set<string>();
    for (const [p, item] of Object.entries(doc.paths ?? {}))
      for (const m of Object.keys(item ?? {})) documented.add(`${m.toUpperCase()} ${p}`);
    const served = e.engine.ctx.routes
      .filter((r) => r.url.startsWith("/v1/") && r.url !== "/v1/openapi.json")
      .map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, "{$1}")}`)
      // 405-only routes (templates are immutable) are not operations; HEAD answers as GET does.
      .filter((k) => !/^(PATCH|PUT) \/v1\/templates\/\{id\}$/.test(k) && !k.startsWith("HEAD "));
    expect(served.filter((k) => !documented.has(k))).toEqual([]);
  });
});
