import { ApiError } from "../../errors.js";
import { UID_BLOCK } from "../../runtime/host.js";

/**
 * The first free uid of the engine's block for a new sandbox. Each sandbox runs as its own uid, so
 * no two live sandboxes may share one: `inUse` is every uid held by a sandbox whose processes exist
 * or whose row says they may (creating, paused…). The block's last uid belongs to template builds
 * (runtime/template-build.ts builderUid), so it is never handed out here.
 */
export function allocateUid(uidBase: number, inUse: Iterable<number>): number {
  const used = new Set(inUse);
  for (let uid = uidBase; uid < uidBase + UID_BLOCK - 1; uid++) if (!used.has(uid)) return uid;
  throw new ApiError(
    "fleet_full",
    `All ${UID_BLOCK} sandbox uids of this engine are in use`,
    {},
    { "Retry-After": "30" },
  );
}
