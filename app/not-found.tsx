import type { Metadata } from "next";
import { buttonVariants } from "../components/ui/button";

export const metadata: Metadata = { title: "Page not found" };

/**
 * Any unknown address. Server-rendered with no client code: the root not-found's client entry loads
 * with every page (it is the boundary on every route's path), so a next/link here put the link's
 * code in every page's first load, once more beside the console's own copy. The way back is a plain
 * link: a full load of /, which sends to /sandboxes with the default team (there is no team to keep
 * here).
 */
export default function NotFound() {
  return (
    <main id="main" className="flex min-h-dvh flex-col items-center justify-center gap-4 px-6 text-center">
      <p className="font-mono text-sm text-muted-foreground">404</p>
      <h1 className="text-2xl font-semibold tracking-tight">Page not found</h1>
      <p className="max-w-sm text-sm text-muted-foreground">
        There is nothing at this address. It may have moved, or the link may be mistyped.
      </p>
      {/* eslint-disable-next-line @next/next/no-html-link-for-pages -- a full load on purpose (above) */}
      <a href="/" className={buttonVariants({ variant: "default" })}>
        Back to the console
      </a>
    </main>
  );
}
