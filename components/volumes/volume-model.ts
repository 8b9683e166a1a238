// What the volume page decides without the network: form checks (the same rules as the API's, so
// a bad value is named before it is sent), the lifetime's words and its deadline, the used/size
// ratio. The API checks again; these only spare a round trip and say why in the user's words.

import { formatGibibytes } from "../../lib/format";
import type { CreateVolumeBody, UpdateVolumeBody, Volume } from "../../lib/orkestr/schemas/volumes";

/** Largest volume the contract allows on any plan; a plan may allow less (limits.max_volume_gb). */
export const CONTRACT_MAX_VOLUME_GB = 100;
export const DEFAULT_VOLUME_GB = 10;
/** The contract's lifetime bounds: hours 1-24 or days 1-3650, one or the other. */
export const MAX_LIFETIME_HOURS = 24;
export const MAX_LIFETIME_DAYS = 3650;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const MiB_PER_GB = 1024;
const HOUR_MS = 3_600_000;

export type LifetimeUnit = "none" | "hours" | "days";

export interface LifetimeInput {
  unit: LifetimeUnit;
  /** The number as typed. */
  amount: string;
}

export interface CreateVolumeForm {
  name: string;
  sizeGb: string;
  /** "" = the API's default region. */
  region: string;
  lifetime: LifetimeInput;
}

export type VolumeFieldErrors = Partial<Record<"name" | "size" | "region" | "lifetime", string>>;

/** A whole number typed in a field, or null when it is not one. */
function wholeNumber(text: string): number | null {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : null;
}

/** Why a volume name would be refused, or null. Names stand in for ids, so they may never look like one. */
export function nameProblem(name: string): string | null {
  if (!name) return "Name the volume.";
  if (name.length > 63) return "At most 63 characters.";
  if (!NAME.test(name)) return "Letters, digits, '.', '_' and '-', starting with a letter or digit.";
  if (name.toLowerCase().startsWith("vol_")) return 'A name may not start with "vol_": ids do.';
  return null;
}

/** The largest size this plan allows (the plan's, else the contract's). */
export function maxVolumeGb(planMax: number | null | undefined): number {
  return typeof planMax === "number" && planMax > 0
    ? Math.min(planMax, CONTRACT_MAX_VOLUME_GB)
    : CONTRACT_MAX_VOLUME_GB;
}

/** The lifetime as the API's fields; `clear` sends null (PATCH: "keep it after all"). */
export function lifetimeFields(
  input: LifetimeInput,
):
  | { ok: true; fields: Pick<UpdateVolumeBody, "max_lifetime_days" | "max_lifetime_hours"> }
  | { ok: false; error: string } {
  if (input.unit === "none") return { ok: true, fields: { max_lifetime_days: null } };
  const n = wholeNumber(input.amount);
  const max = input.unit === "hours" ? MAX_LIFETIME_HOURS : MAX_LIFETIME_DAYS;
  if (n === null || n < 1 || n > max)
    return {
      ok: false,
      error:
        input.unit === "hours"
          ? `Hours are 1 to ${MAX_LIFETIME_HOURS}; for longer, count in days.`
          : `Days are 1 to ${MAX_LIFETIME_DAYS}.`,
    };
  return { ok: true, fields: input.unit === "hours" ? { max_lifetime_hours: n } : { max_lifetime_days: n } };
}

/** The create request for the form, or what is wrong with it. */
export function buildCreateBody(
  form: CreateVolumeForm,
  ctx: { maxGb: number; regions: readonly string[]; existingNames: readonly string[] },
): { body: CreateVolumeBody | null; errors: VolumeFieldErrors } {
  const errors: VolumeFieldErrors = {};
  const name = form.name.trim();
  const nameError = nameProblem(name);
  if (nameError) errors.name = nameError;
  else if (ctx.existingNames.includes(name)) errors.name = `A volume named "${name}" exists already.`;
  const size = wholeNumber(form.sizeGb);
  if (size === null || size < 1) errors.size = "A whole number of GiB, at least 1.";
  else if (size > ctx.maxGb) errors.size = `This plan allows volumes of at most ${formatGibibytes(ctx.maxGb)}.`;
  if (form.region && ctx.regions.length && !ctx.regions.includes(form.region))
    errors.region = `Not one of this API's regions (${ctx.regions.join(", ")}).`;
  const lifetime = lifetimeFields(form.lifetime);
  if (!lifetime.ok) errors.lifetime = lifetime.error;
  if (Object.keys(errors).length || size === null || !lifetime.ok) return { body: null, errors };
  const body: CreateVolumeBody = { name, size_gb: size };
  if (form.region) body.region = form.region;
  // A create without a lifetime simply leaves it out.
  if (form.lifetime.unit !== "none") Object.assign(body, lifetime.fields);
  return { body, errors };
}

/**
 * The new size for a grow, or why not. Volumes only grow: a smaller size would throw away data that
 * may sit past the new end, so the API refuses it (409 cannot_shrink) and so does this form.
 */
export function growProblem(current: number, text: string, maxGb: number): string | null {
  const n = wholeNumber(text);
  if (n === null) return "A whole number of GiB.";
  if (n < current)
    return `Volumes only grow: ${n} GiB is smaller than its ${formatGibibytes(current)}. To get a smaller one, create a new volume and copy what you need.`;
  if (n === current) return `It is ${formatGibibytes(current)} already: enter a larger size.`;
  if (n > maxGb) return `This plan allows volumes of at most ${formatGibibytes(maxGb)}.`;
  return null;
}

/** "6 hours", "30 days", or null without a lifetime. */
export function lifetimeLabel(v: Pick<Volume, "max_lifetime_hours" | "max_lifetime_days">): string | null {
  if (typeof v.max_lifetime_days === "number")
    return v.max_lifetime_days === 1 ? "1 day" : `${v.max_lifetime_days} days`;
  const h = v.max_lifetime_hours;
  if (typeof h !== "number") return null;
  if (h % 24 === 0) return h === 24 ? "1 day" : `${h / 24} days`;
  return h === 1 ? "1 hour" : `${h} hours`;
}

/** The form's starting point for a volume's current lifetime. */
export function lifetimeInputOf(v: Pick<Volume, "max_lifetime_hours" | "max_lifetime_days">): LifetimeInput {
  if (typeof v.max_lifetime_days === "number") return { unit: "days", amount: String(v.max_lifetime_days) };
  if (typeof v.max_lifetime_hours === "number") return { unit: "hours", amount: String(v.max_lifetime_hours) };
  return { unit: "none", amount: "7" };
}

/**
 * When a lifetime would end the volume. The lifetime counts from the volume's creation, not from
 * the change (the API's rule), so a short one on an old volume can already be over: the dialog says
 * so before the engine's sweep deletes it.
 */
export function lifetimeDeadline(createdAtMs: number | null, input: LifetimeInput): number | null {
  if (createdAtMs === null || input.unit === "none") return null;
  const n = wholeNumber(input.amount);
  if (n === null || n < 1) return null;
  return createdAtMs + n * (input.unit === "days" ? 24 : 1) * HOUR_MS;
}

/** Space used as a share of the size, 0-1, or null when either is unknown. */
export function usedFraction(v: Pick<Volume, "size_mb" | "size_gb">): number | null {
  if (typeof v.size_mb !== "number" || typeof v.size_gb !== "number" || v.size_gb <= 0) return null;
  return Math.min(1, Math.max(0, v.size_mb / (v.size_gb * MiB_PER_GB)));
}

/** What a move looks like now: still going, arrived, or back where it was (the copy failed). */
export function moveOutcome(
  v: Pick<Volume, "status" | "region"> | undefined,
  target: string,
): "moving" | "moved" | "failed" | "gone" {
  if (!v) return "gone";
  if (v.status === "moving") return "moving";
  return v.region === target ? "moved" : "failed";
}
