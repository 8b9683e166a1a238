"use client";

import { usePathname } from "next/navigation";
import type { ReactNode } from "react";
import { cn } from "../../lib/utils";
import { IntentLink } from "./intent-link";

/**
 * One entry of the console nav (components/layout/sidebar.tsx renders the rest on the server): an
 * IntentLink (the tab's `?team=` kept, prefetched on intent) that is the current page's section
 * (aria-current="page") on its own path and the paths below it (/sandboxes/abc → Sandboxes).
 * `children` is the entry's icon (an <svg>, coloured when current) and title.
 */
export function NavLink({ href, children }: { href: `/${string}`; children: ReactNode }) {
  const pathname = usePathname();
  const active = pathname === href || pathname.startsWith(`${href}/`);
  return (
    <IntentLink
      href={href}
      aria-current={active ? "page" : undefined}
      className={cn(
        "flex items-center gap-2.5 rounded-md px-2 py-1.5 text-sm text-muted-foreground transition-colors",
        "hover:bg-accent hover:text-accent-foreground",
        active && "bg-accent font-medium text-accent-foreground [&>svg]:text-primary",
      )}
    >
      {children}
    </IntentLink>
  );
}
