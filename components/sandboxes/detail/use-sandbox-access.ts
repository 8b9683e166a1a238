"use client";

import { hasPermission } from "../../../lib/permissions";
import { roleReason } from "../../../lib/role-reason";
import { usePermissions } from "../../layout/permissions";

/**
 * What the user's role lets them do with a sandbox (the detail frame, its tabs, the list): change it
 * (lifecycle, metadata, files, terminal, port scans, preview tokens: sandboxes.write) and snapshot it
 * (snapshots.write), with the reason to show when they may not.
 */
export function useSandboxAccess() {
  const access = usePermissions();
  return {
    canChange: hasPermission(access, "sandboxes.write"),
    canSnapshot: hasPermission(access, "snapshots.write"),
    /** Why `action` (a sandbox change) is not offered, or null when it is. */
    whyNot: (action: string) => roleReason(access, "sandboxes.write", action),
    /** Why Snapshot… is not offered, or null when it is. */
    whyNoSnapshot: roleReason(access, "snapshots.write", "take snapshots"),
  };
}
