"use client";

import { useEffect } from "react";
import { applyTheme } from "../components/layout/theme-provider";
import "./globals.css";

/**
 * Replaces the root layout when it fails, so it renders its own document (no providers, no inline
 * script); the stored theme is applied once it mounts.
 */
export default function GlobalError({ error, retry }: { error: unknown; retry: () => void }) {
  useEffect(() => applyTheme(), []);
  const digest =
    typeof error === "object" && error !== null && "digest" in error && typeof error.digest === "string"
      ? error.digest
      : undefined;
  return (
    <html lang="en">
      <body className="min-h-dvh bg-background font-sans text-foreground antialiased">
        <title>Something went wrong · Baton</title>
        <main className="flex min-h-dvh flex-col items-center justify-center gap-4 px-6 text-center">
          <h1 className="text-2xl font-semibold tracking-tight">Something went wrong</h1>
          <p className="max-w-sm text-sm text-muted-foreground">
            Baton could not render this page. Try again; if it keeps failing, the server log has the details
            {digest ? (
              <>
                {" "}
                under reference <code className="font-mono">{digest}</code>
              </>
            ) : null}
            .
          </p>
          <button
            type="button"
            onClick={() => retry()}
            className="inline-flex h-9 items-center justify-center rounded-md bg-primary px-4 text-sm font-medium text-primary-foreground hover:bg-primary/90"
          >
            Try again
          </button>
        </main>
      </body>
    </html>
  );
}
