import { TeamLink as Link } from "../layout/team-link";
import { cn } from "../../lib/utils";

// Settings' own navigation, above each settings page: the user's account, the team (admins), the
// connections, personal API tokens, and single sign-on (admins). A server component: the current page is marked with
// aria-current, and links a role cannot use are not offered.

export type SettingsSection = "account" | "team" | "connections" | "tokens" | "sso";

const ITEMS: ReadonlyArray<{ id: SettingsSection; href: string; label: string; admin: boolean; prefetch?: false }> = [
  { id: "account", href: "/settings", label: "Account", admin: false },
  { id: "team", href: "/settings/team", label: "Team", admin: true },
  { id: "connections", href: "/settings/connections", label: "Connections", admin: false },
  { id: "tokens", href: "/settings/tokens", label: "API tokens", admin: false },
  // Rarely visited, and its configuration is read on the server: loaded when clicked, not on every settings page.
  { id: "sso", href: "/settings/sso", label: "Single sign-on", admin: true, prefetch: false },
];

export function SettingsNav({ current, isAdmin }: { current: SettingsSection; isAdmin: boolean }) {
  return (
    <nav aria-label="Settings" className="-mx-1 mb-6 overflow-x-auto border-b border-border">
      <ul className="flex min-w-max gap-1 px-1">
        {ITEMS.filter((item) => isAdmin || !item.admin).map((item) => {
          const active = item.id === current;
          return (
            <li key={item.id}>
              <Link
                href={item.href}
                prefetch={item.prefetch}
                aria-current={active ? "page" : undefined}
                className={cn(
                  "-mb-px inline-flex h-10 items-center border-b-2 px-3 text-sm font-medium transition-colors",
                  "focus-visible:rounded-sm focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-ring",
                  active
                    ? "border-primary text-foreground"
                    : "border-transparent text-muted-foreground hover:text-foreground",
                )}
              >
                {item.label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
