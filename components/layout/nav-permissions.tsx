"use client";

import { createContext, useContext, type ReactNode } from "react";
import type { NavItem } from "../../lib/config/nav";

type NavPerm = NonNullable<NavItem["perm"]>;

const NavPermissionsContext = createContext<readonly NavPerm[]>([]);

/**
 * Which permission-gated nav entries (lib/config/nav.ts `perm`) the user's role in the acting team
 * grants: the console layout says it once, the sidebar and the command palette read it. Only what
 * is offered depends on it; the pages and the API check the permission themselves.
 */
export function NavPermissions({ allowed, children }: { allowed: readonly NavPerm[]; children: ReactNode }) {
  return <NavPermissionsContext.Provider value={allowed}>{children}</NavPermissionsContext.Provider>;
}

export function useNavPermissions(): readonly NavPerm[] {
  return useContext(NavPermissionsContext);
}
