"use client";

import { createContext, useContext, type ReactNode } from "react";
import { hasPermission, NO_PERMISSIONS, type ClientPermissions, type Permission } from "../../lib/permissions";

// The acting team's role and permissions, given once by the console layout (server-side, from
// lib/server/rbac.ts's data): client components ask `usePermission("sandboxes.write")` and show the
// reason (`useRoleReason`, ./use-role-reason.ts: loaded only by pages that show one) where a
// control is not offered. The API checks again and answers 403.

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
