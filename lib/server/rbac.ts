import "server-only";
import { ROLES, type Role } from "./db/schema";

// Authorization as data: what each role of a team may do. Route handlers
// name the permission they need (`route({ perm: "sandboxes.write" }, …)`); nothing else compares
// roles. A new permission is one line here plus the roles that get it.

export const PERMISSIONS = [
  "sandboxes.read",
  "sandboxes.write",
  "volumes.read",
  "volumes.write",
  "snapshots.read",
  "snapshots.write",
  "templates.read",
  "templates.write",
  "webhooks.read",
  "webhooks.write",
  "usage.read",
  "connections.manage",
  "team.read",
  "team.manage",
  /** Deleting the team (owner only). */
  "team.delete",
  "members.manage",
  /** Spend caps and the rate card (issue 22): owners, and admins when the owners allow it (billing.delegate). */
  "billing.manage",
  /** Letting the team's admins manage billing: owners only, never delegated. */
  "billing.delegate",
  "audit.read",
  // The audit log's retention and SIEM stream: owners only.
  "audit.manage",
  "ownership.transfer",
] as const;

export type Permission = (typeof PERMISSIONS)[number];
export { ROLES, type Role };

const READ: readonly Permission[] = [
  "sandboxes.read",
  "volumes.read",
  "snapshots.read",
  "templates.read",
  "webhooks.read",
  "usage.read",
  "team.read",
];
const WRITE: readonly Permission[] = [
  "sandboxes.write",
  "volumes.write",
  "snapshots.write",
  "templates.write",
  "webhooks.write",
];

/**
 * - viewer: reads everything of the team, changes nothing.
 * - member: works with sandboxes and their resources, and keeps their own orkestr connections.
 * - admin: also manages the team's settings and members and reads the audit log.
 * - owner: everything, billing included (and only owners may make or remove owners: see teams.ts).
 */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  viewer: [...READ],
  member: [...READ, ...WRITE, "connections.manage"],
  admin: [...READ, ...WRITE, "connections.manage", "team.manage", "members.manage", "audit.read"],
  owner: [...PERMISSIONS],
};

const lookup = new Map<Role, ReadonlySet<Permission>>(ROLES.map((role) => [role, new Set(ROLE_PERMISSIONS[role])]));

/** Whether a role grants a permission. No role (not a member) grants nothing. */
export function can(role: Role | null | undefined, permission: Permission): boolean {
  if (!role) return false;
  return lookup.get(role)?.has(permission) ?? false;
}

/** Permissions an owner may extend to the team's admins, each by a setting of the team. */
export const DELEGABLE_TO_ADMINS = ["billing.manage"] as const satisfies readonly Permission[];

/** What the acting team's settings add to its role (lib/server/db/teams.ts Team). */
export interface TeamGrants {
  role: Role;
  team: { adminsManageBilling: boolean };
}

/**
 * Whether the acting team grants a permission: its role's, plus what the owners delegated to admins.
 * Every check of a request or page against its acting team goes through here (route(), pages, the
 * terminal relay), so a delegation shows everywhere at once.
 */
export function actingCan(acting: TeamGrants | null | undefined, permission: Permission): boolean {
  if (!acting) return false;
  if (can(acting.role, permission)) return true;
  return acting.role === "admin" && permission === "billing.manage" && acting.team.adminsManageBilling;
}

/** Every permission the acting team grants, for the browser (lib/server/client-permissions.ts). */
export function actingPermissions(acting: TeamGrants): Permission[] {
  return PERMISSIONS.filter((p) => actingCan(acting, p));
}

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

/** The scopes of a local-engine token (engine/src/auth.ts: reads need the first, changes the second). */
export type EngineScope = "sandboxes:read" | "sandboxes:write";

/**
 * The local-engine scopes a role needs, and so the most a member's engine token of that team may
 * carry: reads for every role, writes only for a role that may change something the engine keeps.
 * A viewer's token cannot change anything, even outside Baton.
 */
export function engineScopesFor(role: Role): EngineScope[] {
  return ROLE_PERMISSIONS[role].some((p) => WRITE.includes(p))
    ? ["sandboxes:read", "sandboxes:write"]
    : ["sandboxes:read"];
}
