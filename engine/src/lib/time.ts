/** RFC 3339 UTC with milliseconds, as the contract's timestamps. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function isoOrNull(ms: number | null | undefined): string | null {
  return ms == null ? null : iso(ms);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
