import "server-only";
import type { ClientPermissions } from "../permissions";
import { roleReason } from "../role-reason";
import type { ActingTeam } from "./acting-team";
import { actingPermissions, can, PERMISSIONS, ROLES, type Permission, type Role } from "./rbac";

// The acting team's role and permissions as the browser gets them once per page (the console
// layout hands them to components/layout/permissions.tsx): rbac.ts's data, not a copy of its rules.

/** ROLES from the least to the most: viewer, member, admin, owner. */
const LEAST_FIRST = [...ROLES].reverse();

/** The least role that grants `permission`, or undefined when none does. */
export function leastRoleWith(permission: Permission): Role | undefined {
  return LEAST_FIRST.find((role) => can(role, permission));
}

/** For each permission, the least role that grants it. */
const GRANTED_FROM: Partial<Record<Permission, Role>> = Object.fromEntries(
  PERMISSIONS.flatMap((p) => {
    const role = leastRoleWith(p);
    return role ? [[p, role]] : [];
  }),
);

/**
 * For each role, the least role that may give it: roles are changed with members.manage, and only
 * owners make owners (lib/server/db/teams.ts).
 */
const GRANTED_BY: Partial<Record<Role, Role>> = Object.fromEntries(
  ROLES.flatMap((role) => {
    const by = role === "owner" ? "owner" : leastRoleWith("members.manage");
    return by ? [[role, by]] : [];
  }),
);

export function clientPermissions(userId: string, team: ActingTeam | null): ClientPermissions {
  return {
    userId,
    team: team ? { id: team.team.id, name: team.team.name } : null,
    role: team?.role ?? null,
    permissions: team ? actingPermissions(team) : [],
    grantedFrom: GRANTED_FROM,
    grantedBy: GRANTED_BY,
  };
}

/** A server page's reason for a control its role may not use (lib/role-reason.ts), or null when it may. */
export function reasonFor(team: ActingTeam, permission: Permission, action: string): string | null {
  return roleReason(clientPermissions(team.userId, team), permission, action);
}
