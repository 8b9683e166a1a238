import { SIZES, type Plan, type SizeName } from "../plans.js";
import type { HostCapacity } from "./admission.js";

/** One entry of the limits response's `sizes`: the menu, what the plan allows and what this machine can hold. */
export interface SizeReport {
  size: SizeName;
  cpu: number;
  memory_mb: number;
  /** The plan's answer (the contract's meaning): a create of this size is refused otherwise (403 size_not_allowed). */
  allowed: boolean;
  /** Whether this machine could ever hold one (its RAM for sandboxes); null when the engine measures no host. */
  fits_host: boolean | null;
  /** Why a create of this size is refused, or null when nothing but a full budget stands in the way. */
  reason: string | null;
}

const ORDER: SizeName[] = ["small", "medium", "large"];

/**
 * The size menu with a reason beside each refusal, so a client can say why a size is greyed out
 * without knowing the plans: the plan's refusal first (it decides for every machine), then this
 * machine's, whose RAM for sandboxes (total minus the host's reserve) may be smaller than one size.
 */
export function sizeReport(plan: Plan, host: HostCapacity | undefined): SizeReport[] {
  return ORDER.map((size) => {
    const { cpu, memory_mb } = SIZES[size];
    const allowed = plan.allowedSizes.includes(size);
    const fits = host ? memory_mb <= host.memory_for_sandboxes_mb : null;
    let reason: string | null = null;
    if (!allowed) {
      reason = `The ${plan.name} plan offers ${plan.allowedSizes.join(", ")} only: a create of size ${size} answers 403 size_not_allowed.`;
    } else if (fits === false) {
      reason = `This machine keeps ${host!.memory_for_sandboxes_mb} MiB of RAM for sandboxes and a ${size} sandbox needs ${memory_mb} MiB: a create answers 503 fleet_full.`;
    }
    return { size, cpu, memory_mb, allowed, fits_host: fits, reason };
  });
}
