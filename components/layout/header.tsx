import type { ReactNode } from "react";
import { cn } from "../../lib/utils";
import { ConnectionStatus, type ConnectionStatusProps } from "./connection-status";
import { MobileNav } from "./mobile-nav";
import { ThemeToggle } from "./theme-toggle";
import { UserMenu, type UserMenuUser } from "./user-menu";

/** The console's top bar: the mobile nav button, which orkestr API is connected, the theme, and the signed-in user. */
export function Header({
  connection,
  user,
  children,
  className,
}: {
  connection: ConnectionStatusProps;
  user: UserMenuUser;
  children?: ReactNode;
  className?: string;
}) {
  return (
    <header className={cn("sticky top-0 z-10 flex h-14 shrink-0 items-center gap-3 border-b bg-background/95 px-4 backdrop-blur md:px-6", className)}>
      <MobileNav />
      <div className="min-w-0 flex-1">{children}</div>
      <ConnectionStatus {...connection} />
      <ThemeToggle />
      <UserMenu user={user} />
    </header>
  );
}
