import path from "node:path";
import type { NextConfig } from "next";

// lib/ imports its siblings NodeNext-style (`./env.js` for env.ts); this loader lets Turbopack
// resolve those to the .ts sources (see the loader's header). Only our own TypeScript files that
// contain such an import go through it.
const jsToTsImports = {
  loaders: [path.join(process.cwd(), "scripts/next/js-to-ts-imports-loader.cjs")],
  condition: { all: [{ not: "foreign" as const }, { content: /\bfrom\s*["']\.{1,2}\/[^"'\r\n]+\.js["']/ }] },
};

const nextConfig: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Native modules stay out of the server bundles and are required from node_modules at runtime.
  // (Next's built-in list has all three today; naming them keeps that true if the list changes.)
  serverExternalPackages: ["better-sqlite3", "pg", "node-pty"],
  // The app has its own tsconfig (bundler resolution, DOM, JSX); the root one is NodeNext for the engine.
  typescript: { tsconfigPath: "tsconfig.next.json" },
  turbopack: {
    rules: {
      "*.ts": { ...jsToTsImports, as: "*.ts" },
      "*.tsx": { ...jsToTsImports, as: "*.tsx" },
    },
  },
};

export default nextConfig;
