import type { LaunchOptions } from "@playwright/test";

/**
 * How Baton's browser runs start Debian's Chromium (never a downloaded browser), for the e2e tests
 * (playwright.config.ts) and the list benchmark (scripts/bench-list.ts) alike: no sandbox (we run as
 * root in a container), no GPU, no QUIC, and none of the background traffic or first-run work a
 * fresh profile would otherwise start, which would only add noise to timings.
 */
export const CHROMIUM_LAUNCH: LaunchOptions = {
  executablePath: "/usr/bin/chromium",
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
};
