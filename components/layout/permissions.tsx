"use client";

import { createContext, useContext, type ReactNode } from "react";
import {
  hasPermission,
  NO_PERMISSIONS,
  roleReason,
  type ClientPermissions,
  type Permission,
} from "../../lib/role-reason";

// The acting team's role and permissions, given once by the console layout (server-side, from
// lib/server/rbac.ts's data): client components ask `usePermission("sandboxes.write")` and show the
// reason (`useRoleReason`) where a control is not offered. The API checks again and answers 403.

const PermissionsContext = createContext<ClientPermissions>(NO_PERMISSIONS);

export function PermissionsProvider({ value, children }: { value: ClientPermissions; children: ReactNode }) {
  return <PermissionsContext.Provider value={value}>{children}</PermissionsContext.Provider>;
}

export function usePermissions(): ClientPermissions {
  return useContext(PermissionsContext);
}

/** Whether the user's role in the acting team grants `permission`. */
export function usePermission(permission: Permission): boolean {
  return hasPermission(useContext(PermissionsContext), permission);
}

/** Why the user may not `action` (needing `permission`), or null when they may. */
export function useRoleReason(permission: Permission, action?: string): string | null {
  return roleReason(useContext(PermissionsContext), permission, action);
}
