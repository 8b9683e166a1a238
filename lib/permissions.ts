// What a role may do, as the browser knows it: the data comes from the server once per page
// (lib/server/client-permissions.ts builds it from lib/server/rbac.ts's ROLE_PERMISSIONS), so no
// component compares roles; it asks for a permission. Pure and client-safe, and small: every console
// page loads it (components/layout/permissions.tsx). Why a control is not offered, in words, is in
// ./role-reason.ts, which only the pages that show a reason load.
// Only the types cross from the server module (erased at build time), never its code.

import type { Permission, Role } from "./server/rbac";

export type { Permission, Role };

/** The acting team's role and permissions, sent to the browser (components/layout/permissions.tsx). */
export interface ClientPermissions {
  /** The signed-in user ("you" where their id shows, e.g. a sandbox's creator). */
  userId: string | null;
  /** The team the page acts in; null when the user is in no team (then nothing is granted). */
  team: { id: string; name: string } | null;
  role: Role | null;
  /** What the role grants (ROLE_PERMISSIONS[role]). */
  permissions: readonly Permission[];
  /** For each permission, the least role that grants it (absent: no role does). */
  grantedFrom: Partial<Record<Permission, Role>>;
  /** For each role, the least role that may give it to someone (owners make owners). */
  grantedBy: Partial<Record<Role, Role>>;
}

/** Nothing granted: the value before the server's (and for a user in no team). */
export const NO_PERMISSIONS: ClientPermissions = {
  userId: null,
  team: null,
  role: null,
  permissions: [],
  grantedFrom: {},
  grantedBy: {},
};

export function hasPermission(access: ClientPermissions, permission: Permission): boolean {
  return access.permissions.includes(permission);
}
