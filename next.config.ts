import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Native modules stay out of the server bundles and are required from node_modules at runtime.
  // (Next's built-in list has both today; naming them keeps that true if the list changes.)
  serverExternalPackages: ["better-sqlite3", "pg"],
};

export default nextConfig;
