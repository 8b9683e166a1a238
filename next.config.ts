import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Native modules stay out of the server bundles and are required from node_modules at runtime.
  // (Next's built-in list has all three today; naming them keeps that true if the list changes.)
  serverExternalPackages: ["better-sqlite3", "pg", "node-pty"],
  // The app has its own tsconfig (bundler resolution, DOM, JSX); the root one is NodeNext for the engine.
  typescript: { tsconfigPath: "tsconfig.next.json" },
};

export default nextConfig;
