"use client";

import type { NavItem } from "../../lib/config/nav";
import { usePermissions } from "./permissions";

type NavPerm = NonNullable<NavItem["perm"]>;

/**
 * Which permission-gated nav entries (lib/config/nav.ts `perm`) the user's role in the acting team
 * grants, read from the permissions the console layout gives once (components/layout/permissions.tsx).
 * Only what is offered depends on it; the pages and the API check the permission themselves.
 */
export function useNavPermissions(): readonly NavPerm[] {
  return usePermissions().permissions.filter((p): p is NavPerm => p === "audit.read");
}
