/* global require, module */
/* eslint-disable @typescript-eslint/no-require-imports -- webpack loaders are CommonJS modules */
// A Turbopack loader for the Next.js build (wired up in next.config.ts). lib/ is written for Node's
// ESM resolution (tsconfig.json is NodeNext), so its relative imports name the emitted file:
// `import { getEnv } from "../env.js"` for env.ts. TypeScript and vitest map `.js` to the `.ts`
// source; Turbopack does not yet (vercel/next.js#82945, an open PR adds `resolveExtensionAlias`).
// This rewrites such a specifier to its extensionless form — only when no `.js` file exists and a
// `.ts`/`.tsx` file does — so Turbopack resolves it like any other TypeScript import. Delete it
// once Turbopack can alias extensions.
const fs = require("node:fs");
const path = require("node:path");

const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)(["'])(\.{1,2}\/[^"'\r\n]+?)\.js\2/g;

module.exports = function jsToTsImports(source) {
  const dir = path.dirname(this.resourcePath);
  return String(source).replace(SPECIFIER, (match, lead, quote, stem) => {
    const base = path.resolve(dir, stem);
    if (fs.existsSync(`${base}.js`)) return match;
    if (fs.existsSync(`${base}.ts`) || fs.existsSync(`${base}.tsx`)) return `${lead}${quote}${stem}${quote}`;
    return match;
  });
};
