// The create form's state, its validation and the request body it stands for. Pure functions (no
// React, no zod: this runs in the browser under a CSP without 'unsafe-eval'), unit-tested in
// tests/console/sandbox-create-request.test.ts. The rules mirror the contract's POST /v1/sandboxes body
// and the plan's GET /v1/sandboxes/limits, so most mistakes are caught here, next to their field,
// before a round trip.

import type { Limits } from "../../../lib/orkestr/schemas/limits";
import type { CreateSandboxBody } from "../../../lib/orkestr/schemas/sandboxes";
import type { Volume } from "../../../lib/orkestr/schemas/volumes";
import {
  DEFAULT_MAX_TIMEOUT_SECONDS,
  DEFAULT_TIMEOUT_SECONDS,
  maxTimeoutSeconds,
  MIN_TIMEOUT_SECONDS,
} from "./timeout-range";
import { CREATOR_STAMP_KEYS, isReservedMetadataKey, RESERVED_METADATA_PREFIX } from "../../../lib/sandbox-creator";

export type NetworkChoice = "off" | "restricted" | "open";
export type SourceChoice = "template" | "snapshot";
export type VolumeChoice = "none" | "existing" | "new";

export interface KeyValueRow {
  /** Stable React key and error key; never sent. */
  rowId: string;
  key: string;
  value: string;
}

export interface CreateFormState {
  source: SourceChoice;
  template: string;
  snapshot: string;
  /** "" = the server's default (small), or the snapshot's size for a fork. */
  size: string;
  /** "" = automatic. */
  region: string;
  network: NetworkChoice;
  allowDomains: string[];
  /** As typed; validated to an integer. */
  timeoutSeconds: string;
  onTimeout: "kill" | "pause";
  autoResume: boolean;
  env: KeyValueRow[];
  metadata: KeyValueRow[];
  volumeChoice: VolumeChoice;
  volume: string;
  newVolumeName: string;
  previewAuth: boolean;
}

/** What the options come from: the plan's limits and the volume list (for "in use" checks). */
export interface CreateFormContext {
  limits: Limits | null | undefined;
  volumes: readonly Volume[];
}

/**
 * Errors by field: "template", "snapshot", "size", "region", "network", "allow_domains",
 * "timeout_seconds", "volume", "preview_auth", and per row "env.<rowId>" / "metadata.<rowId>".
 */
export type FieldErrors = Record<string, string>;

// The timeout range is ./timeout-range.ts (the sandbox page needs it without the rest); the form reads it from here too.
export { DEFAULT_MAX_TIMEOUT_SECONDS, DEFAULT_TIMEOUT_SECONDS, maxTimeoutSeconds, MIN_TIMEOUT_SECONDS };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Host names as the engine and orkestr accept them, with an optional leading wildcard label. */
const DOMAIN = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;
/** Volume names must never look like an id (same rule as the engine's resource names). */
const VOLUME_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const MAX_METADATA_KEYS = 50 - CREATOR_STAMP_KEYS;
export const MAX_ENV_VARS = 200;

let rowCounter = 0;
export function newRow(key = "", value = ""): KeyValueRow {
  rowCounter += 1;
  return { rowId: `r${rowCounter}`, key, value };
}

export function initialFormState(limits: Limits | null | undefined): CreateFormState {
  return {
    source: "template",
    template: "python-3.12",
    snapshot: "",
    size: "",
    region: "",
    network: "off",
    allowDomains: [...(limits?.default_egress_domains ?? [])],
    timeoutSeconds: String(DEFAULT_TIMEOUT_SECONDS),
    onTimeout: "kill",
    autoResume: false,
    env: [newRow()],
    metadata: [newRow()],
    volumeChoice: "none",
    volume: "",
    newVolumeName: "",
    previewAuth: false,
  };
}

/** Why a size cannot be picked, or null when it can. */
export function sizeRefusal(limits: Limits | null | undefined, size: string): string | null {
  const option = limits?.sizes?.find((s) => s.size === size);
  const allowed = option?.allowed ?? (limits?.allowed_sizes ? limits.allowed_sizes.includes(size) : true);
  if (allowed) return null;
  const plan = limits?.plan ? `the ${limits.plan} plan` : "your plan";
  const which = limits?.allowed_sizes?.length ? ` (it allows ${limits.allowed_sizes.join(", ")})` : "";
  return `Not available on ${plan}${which}.`;
}

/** Why network "open" cannot be picked, or null. */
export function openNetworkRefusal(limits: Limits | null | undefined): string | null {
  if (limits?.network_open_allowed === false) {
    return `Open egress is not available here: it needs a verified payment method${limits.plan ? ` (plan: ${limits.plan})` : ""}, and a server able to give sandboxes full network access.`;
  }
  return null;
}

/** Why preview_auth is pointless or refused, or null. */
export function previewAuthRefusal(limits: Limits | null | undefined, network: NetworkChoice): string | null {
  if (limits?.previews_allowed === false)
    return `Preview URLs are not available on ${limits.plan ? `the ${limits.plan} plan` : "your plan"}.`;
  if (network === "off") return "Previews need a network: choose Restricted or Open.";
  return null;
}

/** Why a volume cannot be attached now (it backs another sandbox), or null. */
export function volumeRefusal(volume: Volume): string | null {
  if (volume.attached_sandbox_id) return `In use by ${volume.attached_sandbox_id}.`;
  if (volume.status && volume.status !== "available" && volume.status !== "attached")
    return `Volume is ${volume.status}.`;
  return null;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function rowsToMap(rows: KeyValueRow[], kind: "env" | "metadata", errors: FieldErrors): Record<string, string> {
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const row of rows) {
    const key = row.key.trim();
    if (!key && !row.value) continue; // an empty row is just a spare line
    const at = `${kind}.${row.rowId}`;
    if (!key) {
      errors[at] = "Give this value a name.";
      continue;
    }
    if (kind === "env" && !ENV_NAME.test(key)) {
      errors[at] = "Names are letters, digits and _, and do not start with a digit.";
      continue;
    }
    if (kind === "metadata" && isReservedMetadataKey(key)) {
      errors[at] =
        `Keys starting with "${RESERVED_METADATA_PREFIX}" are Baton's own: it records who created the sandbox there.`;
      continue;
    }
    if (kind === "metadata" && key.length > 128) {
      errors[at] = "Keys are at most 128 characters.";
      continue;
    }
    if (kind === "metadata" && row.value.length > 1024) {
      errors[at] = "Values are at most 1024 characters.";
      continue;
    }
    if (seen.has(key)) {
      errors[at] = `"${key}" is already set above.`;
      continue;
    }
    seen.add(key);
    out[key] = row.value;
  }
  const count = Object.keys(out).length;
  if (kind === "metadata" && count > MAX_METADATA_KEYS)
    errors.metadata = `At most ${MAX_METADATA_KEYS} metadata keys (Baton keeps ${CREATOR_STAMP_KEYS} for who created the sandbox).`;
  if (kind === "env" && count > MAX_ENV_VARS) errors.env = `At most ${MAX_ENV_VARS} environment variables.`;
  return out;
}

/** A domain as typed (trimmed, lower case, scheme and path dropped) or null if it is not one. */
export function normalizeDomain(input: string): string | null {
  let d = input.trim().toLowerCase();
  d = d
    .replace(/^https?:\/\//, "")
    .replace(/[/?#].*$/, "")
    .replace(/:\d+$/, "");
  return d && d.length <= 253 && DOMAIN.test(d) ? d : null;
}

/**
 * Validates the form and builds the request body. Fields left at the server's default are left
 * out, so "Show code" stays short and the request says only what the user chose.
 */
export function buildCreateRequest(
  state: CreateFormState,
  ctx: CreateFormContext,
): { body: CreateSandboxBody | null; draft: CreateSandboxBody; errors: FieldErrors } {
  const errors: FieldErrors = {};
  const { limits } = ctx;
  const body: CreateSandboxBody = {};

  if (state.source === "template") {
    if (!state.template.trim()) errors.template = "Choose a template.";
    else body.template = state.template.trim();
  } else if (!state.snapshot.trim()) errors.snapshot = "Choose a snapshot to fork from.";
  else body.snapshot = state.snapshot.trim();

  if (state.size) {
    const refusal = sizeRefusal(limits, state.size);
    if (refusal) errors.size = refusal;
    else body.size = state.size as CreateSandboxBody["size"];
  }

  if (state.region && state.source === "template") {
    if (limits?.regions && !limits.regions.includes(state.region))
      errors.region = `Unknown region; choose one of ${limits.regions.join(", ")}.`;
    else body.region = state.region;
  }

  if (state.network !== "off") {
    if (state.network === "open" && openNetworkRefusal(limits)) errors.network = openNetworkRefusal(limits)!;
    body.network = state.network;
  }
  if (state.network === "restricted") {
    const bad = state.allowDomains.find((d) => normalizeDomain(d) === null);
    if (bad !== undefined)
      errors.allow_domains = `"${bad}" is not a host name (e.g. api.example.com or *.example.com).`;
    else if (state.allowDomains.length === 0)
      errors.allow_domains = "Add at least one domain, or choose Off for no network.";
    else if (!sameList(state.allowDomains, limits?.default_egress_domains ?? []))
      body.allow_domains = [...state.allowDomains];
  }

  const timeoutText = state.timeoutSeconds.trim();
  const timeout = Number(timeoutText);
  const max = maxTimeoutSeconds(limits);
  if (!timeoutText || !/^\d+$/.test(timeoutText)) errors.timeout_seconds = "Enter a whole number of seconds.";
  else if (timeout < MIN_TIMEOUT_SECONDS) errors.timeout_seconds = `At least ${MIN_TIMEOUT_SECONDS} seconds.`;
  else if (timeout > max)
    errors.timeout_seconds = `At most ${max} seconds${limits?.plan ? ` on the ${limits.plan} plan` : ""}.`;
  else if (timeout !== DEFAULT_TIMEOUT_SECONDS) body.timeout_seconds = timeout;

  if (state.onTimeout !== "kill") body.on_timeout = state.onTimeout;
  if (state.autoResume) body.auto_resume = true;

  const env = rowsToMap(state.env, "env", errors);
  if (Object.keys(env).length) body.env = env;
  const metadata = rowsToMap(state.metadata, "metadata", errors);
  if (Object.keys(metadata).length) body.metadata = metadata;

  if (state.volumeChoice === "existing") {
    const volume = ctx.volumes.find((v) => v.id === state.volume || v.name === state.volume);
    if (!state.volume) errors.volume = "Choose a volume.";
    else if (volume && volumeRefusal(volume)) errors.volume = volumeRefusal(volume)!;
    else body.volume = volume?.name ?? state.volume;
  } else if (state.volumeChoice === "new") {
    const name = state.newVolumeName.trim();
    if (!name) errors.volume = "Name the new volume.";
    else if (name.length > 63 || !VOLUME_NAME.test(name))
      errors.volume = "Letters, digits, '.', '_' and '-', starting with a letter or digit (at most 63).";
    else if (ctx.volumes.some((v) => v.name === name))
      errors.volume = `A volume named "${name}" exists: choose it from the list instead.`;
    else body.volume = name;
  }

  if (state.previewAuth) {
    const refusal = previewAuthRefusal(limits, state.network);
    if (refusal) errors.preview_auth = refusal;
    else body.preview_auth = true;
  }

  // `draft` holds the valid parts even while others are wrong: "Show code" follows the form as typed.
  return { body: Object.keys(errors).length ? null : body, draft: body, errors };
}
