import type { Metadata, Viewport } from "next";
import { headers } from "next/headers";
import type { ReactNode } from "react";
import { themeScript } from "../lib/theme";
import "./globals.css";
import { Providers } from "./providers";

export const metadata: Metadata = {
  title: { default: "Baton", template: "%s · Baton" },
  description: "Self-hostable console for orkestr Sandboxes",
  robots: { index: false, follow: false },
};

export const viewport: Viewport = {
  themeColor: [
    { media: "(prefers-color-scheme: light)", color: "#fcfcfd" },
    { media: "(prefers-color-scheme: dark)", color: "#111113" },
  ],
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // proxy.ts puts a fresh nonce on every request; Next applies it to its own scripts from the CSP
  // request header, and the one inline script of ours carries it explicitly. Reading headers() also
  // makes every page dynamic, which a per-request nonce requires.
  const nonce = (await headers()).get("x-nonce") ?? undefined;
  return (
    // The theme script changes <html>'s class before hydration; that difference is expected.
    <html lang="en" suppressHydrationWarning>
      <head>
        <script nonce={nonce} dangerouslySetInnerHTML={{ __html: themeScript }} />
      </head>
      <body className="min-h-dvh bg-background font-sans text-foreground antialiased">
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
