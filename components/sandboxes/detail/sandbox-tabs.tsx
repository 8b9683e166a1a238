"use client";

import { usePathname } from "next/navigation";
import { cn } from "../../../lib/utils";
import { sandboxHref } from "../../../lib/links";
import { IntentLink } from "../../layout/intent-link";

const TABS = [
  { label: "Overview", path: "" },
  { label: "Terminal", path: "/terminal" },
  { label: "Files", path: "/files" },
  { label: "Previews", path: "/previews" },
  { label: "Activity", path: "/activity" },
] as const;

/** The detail page's sections as links (each its own URL), the current one marked with aria-current. */
export function SandboxTabs({ id }: { id: string }) {
  const pathname = usePathname();
  const base = sandboxHref(id);
  return (
    <nav aria-label="Sandbox sections" className="-mx-1 mb-6 overflow-x-auto border-b">
      <ul className="flex min-w-max gap-1 px-1">
        {TABS.map((tab) => {
          const href = `${base}${tab.path}`;
          const current =
            tab.path === ""
              ? pathname === base || pathname === `/sandboxes/${id}`
              : pathname.startsWith(href) || pathname.startsWith(`/sandboxes/${id}${tab.path}`);
          return (
            <li key={tab.label}>
              <IntentLink
                href={href}
                aria-current={current ? "page" : undefined}
                className={cn(
                  "-mb-px inline-flex h-10 items-center border-b-2 px-3 text-sm font-medium transition-colors",
                  current
                    ? "border-primary text-foreground"
                    : "border-transparent text-muted-foreground hover:text-foreground",
                )}
              >
                {tab.label}
              </IntentLink>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
