import type { Limits } from "../../../lib/orkestr/schemas/limits";

// A sandbox's timeout range, apart from the create form's request builder (./create-request.ts): the
// sandbox page's Keep alive needs only this, and a module is bundled whole with every export some
// page uses, so importing it from create-request.ts put the whole form builder (~1.5 KiB gz) in the
// sandbox page's first load.

/** POST /v1/sandboxes `timeout_seconds`: the contract's range is 10-3600 unless the plan says otherwise. */
export const DEFAULT_MAX_TIMEOUT_SECONDS = 3600;
export const MIN_TIMEOUT_SECONDS = 10;
export const DEFAULT_TIMEOUT_SECONDS = 300;

/** The plan's longest timeout (`max_timeout_seconds`), or the contract's default when it names none. */
export function maxTimeoutSeconds(limits: Limits | null | undefined): number {
  const n = Number(limits?.max_timeout_seconds);
  return Number.isFinite(n) && n >= MIN_TIMEOUT_SECONDS ? n : DEFAULT_MAX_TIMEOUT_SECONDS;
}
