import type { Metadata } from "next";
// eslint-disable-next-line no-restricted-imports -- prerendered without a request (no team to keep): /sandboxes adds the default team
import Link from "next/link";
import { buttonVariants } from "../components/ui/button";

export const metadata: Metadata = { title: "Page not found" };

export default function NotFound() {
  return (
    <main id="main" className="flex min-h-dvh flex-col items-center justify-center gap-4 px-6 text-center">
      <p className="font-mono text-sm text-muted-foreground">404</p>
      <h1 className="text-2xl font-semibold tracking-tight">Page not found</h1>
      <p className="max-w-sm text-sm text-muted-foreground">
        There is nothing at this address. It may have moved, or the link may be mistyped.
      </p>
      <Link href="/" className={buttonVariants({ variant: "default" })}>
        Back to the console
      </Link>
    </main>
  );
}
