"use client";

import { usePathname } from "next/navigation";
import { consoleNav, navItemFor } from "../../lib/config/nav";
import { cn } from "../../lib/utils";
import { BatonMark, NavIcon } from "./icons";
import { IntentLink } from "./intent-link";
import { useNavPermissions } from "./nav-permissions";
import { TeamLink as Link } from "./team-link";

/** The console's navigation, rendered from lib/config/nav.ts; the current section gets aria-current. */
export function SidebarNav({ onNavigate }: { onNavigate?: () => void }) {
  const pathname = usePathname();
  const current = navItemFor(pathname)?.href;
  const allowed = useNavPermissions();
  return (
    <nav aria-label="Console" className="flex flex-col gap-5 px-3 py-4">
      {consoleNav.map((section) => {
        const headingId = `nav-${section.title.toLowerCase()}`;
        return (
          <div key={section.title} className="flex flex-col gap-1">
            <h2 id={headingId} className="px-2 pb-1 text-xs font-medium uppercase tracking-wide text-muted-foreground">
              {section.title}
            </h2>
            <ul aria-labelledby={headingId} className="flex flex-col gap-0.5">
              {section.items
                .filter((item) => !item.perm || allowed.includes(item.perm))
                .map((item) => {
                  const active = item.href === current;
                  return (
                    <li key={item.href}>
                      <IntentLink
                        href={item.href}
                        aria-current={active ? "page" : undefined}
                        onClick={onNavigate}
                        className={cn(
                          "flex items-center gap-2.5 rounded-md px-2 py-1.5 text-sm text-muted-foreground transition-colors",
                          "hover:bg-accent hover:text-accent-foreground",
                          active && "bg-accent font-medium text-accent-foreground",
                        )}
                      >
                        <NavIcon name={item.icon} className={cn("shrink-0", active && "text-primary")} />
                        {item.title}
                      </IntentLink>
                    </li>
                  );
                })}
            </ul>
          </div>
        );
      })}
    </nav>
  );
}

export function SidebarBrand() {
  return (
    <Link href="/sandboxes" className="flex items-center gap-2 rounded-md px-2 text-base font-semibold tracking-tight">
      <span className="inline-flex size-7 items-center justify-center rounded-md bg-primary text-primary-foreground">
        <BatonMark />
      </span>
      Baton
    </Link>
  );
}

/**
 * The persistent sidebar from the md breakpoint up; below it the header's menu opens the same nav.
 * The column (background, border) stretches with the page; its content sticks to the viewport.
 */
export function Sidebar({ className }: { className?: string }) {
  return (
    <aside className={cn("hidden w-60 shrink-0 border-r bg-card md:block", className)}>
      <div className="sticky top-0 flex h-dvh flex-col">
        <div className="flex h-14 items-center border-b px-3">
          <SidebarBrand />
        </div>
        <div className="flex-1 overflow-y-auto">
          <SidebarNav />
        </div>
      </div>
    </aside>
  );
}
