import type { ReactNode } from "react";
import { cn } from "../../lib/utils";
import type { ConnectionStatusDto } from "../../lib/validations/connections";
import { ConnectionIndicator } from "./connection-indicator";
import { MobileNav } from "./mobile-nav";
import { ThemeToggle } from "./theme-toggle";
import { UserMenu, type UserMenuUser } from "./user-menu";
import { TeamSwitcher, type TeamOption } from "../teams/team-switcher";

/** The console's top bar: the mobile nav button, which orkestr API is connected, the theme, and the signed-in user. */
export function Header({
  connection,
  user,
  teams = [],
  activeSlug = null,
  brand,
  nav,
  children,
  meter,
  className,
}: {
  /** The server-rendered status of the user's active orkestr connection (then polled client-side). */
  connection: ConnectionStatusDto;
  user: UserMenuUser;
  /** The user's teams, and the one this tab's URL names (the switcher). */
  teams?: TeamOption[];
  activeSlug?: string | null;
  /** The server-rendered brand link and console nav (components/layout/sidebar.tsx), for the mobile drawer. */
  brand: ReactNode;
  nav: ReactNode;
  children?: ReactNode;
  /** The caller's closest spend cap, once past 50 % (components/layout/spend-meter.tsx). */
  meter?: ReactNode;
  className?: string;
}) {
  return (
    <header
      className={cn(
        "sticky top-0 z-10 flex h-14 shrink-0 items-center gap-3 border-b bg-background/95 px-4 backdrop-blur md:px-6",
        className,
      )}
    >
      <MobileNav brand={brand} nav={nav} />
      {teams.length ? <TeamSwitcher teams={teams} activeSlug={activeSlug} /> : null}
      <div className="min-w-0 flex-1">{children}</div>
      {meter}
      <ConnectionIndicator initial={connection} />
      <ThemeToggle />
      <UserMenu user={user} />
    </header>
  );
}
