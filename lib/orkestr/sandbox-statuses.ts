/**
 * The sandbox object's `status` values, in the contract's order: only `running` is confirmed, the
 * rest is proposed. One list for the console's schemas, its status vocabulary (lib/sandbox-status.ts)
 * and the local engine, which imports it from here; dependency-free, so either side can load it.
 */
export const SANDBOX_STATUSES = [
  "creating",
  "running",
  "pausing",
  "paused",
  "resuming",
  "terminated",
  "expired",
  "failed",
] as const;
export type SandboxStatusName = (typeof SANDBOX_STATUSES)[number];
