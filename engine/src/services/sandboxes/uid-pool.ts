import { ApiError } from "../../errors.js";
import { SANDBOX_UIDS } from "../../runtime/host.js";

/**
 * The first free uid of the engine's block for a new sandbox. Each sandbox runs as its own uid, so
 * no two live sandboxes may share one: `inUse` is every uid held by a sandbox whose processes exist
 * or whose row says they may (creating, paused…). The block's last uids belong to template builds
 * (runtime/host.ts BUILD_UIDS, one per build slot), so they are never handed out here.
 */
export function allocateUid(uidBase: number, inUse: Iterable<number>): number {
  const used = new Set(inUse);
  for (let uid = uidBase; uid < uidBase + SANDBOX_UIDS; uid++) if (!used.has(uid)) return uid;
  throw new ApiError(
    "fleet_full",
    `All ${SANDBOX_UIDS} sandbox uids of this engine are in use`,
    {},
    { "Retry-After": "30" },
  );
}
