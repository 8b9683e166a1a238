// What a role may do, as the browser knows it, and why a control is not offered: the words shown
// beside (or instead of) a write control the user's role does not allow ("Viewers can't open a
// terminal: ask an admin for the member role."). Pure and client-safe: the data comes from the
// server once per page (lib/server/client-permissions.ts builds it from lib/server/rbac.ts's
// ROLE_PERMISSIONS), so no component compares roles; it asks for a permission.
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

const PLURAL: Record<Role, string> = { owner: "Owners", admin: "Admins", member: "Members", viewer: "Viewers" };

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`;
}

/**
 * Why the user may not `action` (which needs `permission`), or null when they may. One sentence:
 * who they are, what they can't do, and whom to ask for which role.
 */
export function roleReason(access: ClientPermissions, permission: Permission, action: string): string | null {
  if (hasPermission(access, permission)) return null;
  const what = action;
  if (!access.role) {
    return access.team
      ? `You have no role in ${access.team.name}, so you can't ${what}.`
      : `You are not a member of a team, so you can't ${what}.`;
  }
  const needed = access.grantedFrom[permission];
  if (!needed) return `${PLURAL[access.role]} can't ${what}.`;
  const asker = access.grantedBy[needed];
  return asker
    ? `${PLURAL[access.role]} can't ${what}: ask ${article(asker)} for the ${needed} role.`
    : `${PLURAL[access.role]} can't ${what}: it needs the ${needed} role.`;
}
