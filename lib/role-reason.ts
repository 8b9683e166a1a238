// Why a control is not offered: the words shown beside (or instead of) a write control the user's
// role does not allow ("Viewers can't open a terminal: ask an admin for the member role."), from the
// permissions the browser has (./permissions.ts). Pure and client-safe; loaded only by the pages
// that show a reason (components/layout/use-role-reason.ts), not by every page as ./permissions.ts is.

import { hasPermission, type ClientPermissions, type Permission, type Role } from "./permissions";

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
