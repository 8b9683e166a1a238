"use client";

import type { Permission } from "../../lib/permissions";
import { roleReason } from "../../lib/role-reason";
import { usePermissions } from "./permissions";

/** Why the user may not `action` (needing `permission`), or null when they may (lib/role-reason.ts). */
export function useRoleReason(permission: Permission, action: string): string | null {
  return roleReason(usePermissions(), permission, action);
}
