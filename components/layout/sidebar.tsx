import type { ReactNode } from "react";
import { consoleNav } from "../../lib/config/nav";
import type { Permission } from "../../lib/permissions";
import { cn } from "../../lib/utils";
import { BatonMark, NavIcon } from "./nav-icons";
import { NavLink } from "./nav-link";
import { TeamLink as Link } from "./team-link";

/**
 * The console's navigation, rendered on the server from lib/config/nav.ts: the entries a `perm` gates
 * only for a role that has it (the acting team's permissions, as the console layout gives them to the
 * browser; the pages and the API check the permission themselves). Only each link (./nav-link.tsx,
 * which marks the current section with aria-current) is client code: the sections, titles and icons
 * are not in the page's JavaScript.
 */
export function SidebarNav({ permissions }: { permissions: readonly Permission[] }) {
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
                .filter((item) => !item.perm || permissions.includes(item.perm))
                .map((item) => (
                  <li key={item.href}>
                    <NavLink href={item.href}>
                      <NavIcon name={item.icon} className="shrink-0" />
                      {item.title}
                    </NavLink>
                  </li>
                ))}
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
 * The persistent sidebar from the md breakpoint up; below it the header's menu opens the same nav
 * (the layout renders `brand` and `nav` once and hands them to both).
 * The column (background, border) stretches with the page; its content sticks to the viewport.
 */
export function Sidebar({ brand, nav, className }: { brand: ReactNode; nav: ReactNode; className?: string }) {
  return (
    <aside className={cn("hidden w-60 shrink-0 border-r bg-card md:block", className)}>
      <div className="sticky top-0 flex h-dvh flex-col">
        <div className="flex h-14 items-center border-b px-3">{brand}</div>
        <div className="flex-1 overflow-y-auto">{nav}</div>
      </div>
    </aside>
  );
}
