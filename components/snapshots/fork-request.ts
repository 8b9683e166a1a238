// The fork form's request: the create form's state and validation (buildCreateRequest) with the
// source fixed to one snapshot, plus how many children. Pure, unit-tested in tests/console/snapshots.test.ts.

import type { Limits } from "../../lib/orkestr/schemas/limits";
import type { CreateSandboxBody } from "../../lib/orkestr/schemas/sandboxes";
import {
  buildCreateRequest,
  initialFormState,
  type CreateFormState,
  type FieldErrors,
} from "../sandboxes/create/create-request";

/** Children per click: enough to fan out, few enough that a mistake is cheap (the plan's RAM budget still decides). */
export const MAX_FORKS = 10;

export function initialForkState(snapshotId: string, limits: Limits | null | undefined): CreateFormState {
  // Size "" = the snapshot's own size; no volume (one volume holds one sandbox, a fork fans out).
  return { ...initialFormState(limits), source: "snapshot", snapshot: snapshotId, size: "" };
}

/** Why `text` is not a number of children to fork, or null. */
export function forkCountError(text: string): string | null {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return "Enter a whole number of children.";
  const n = Number(t);
  if (n < 1) return "At least one child.";
  if (n > MAX_FORKS) return `At most ${MAX_FORKS} at once.`;
  return null;
}

export function buildForkRequest(
  state: CreateFormState,
  countText: string,
  limits: Limits | null | undefined,
): { body: CreateSandboxBody | null; draft: CreateSandboxBody; count: number; errors: FieldErrors } {
  // Volumes and preview tokens are left out of a fork (see initialForkState): the same checks as create.
  const { body, draft, errors } = buildCreateRequest(
    { ...state, source: "snapshot", volumeChoice: "none", previewAuth: false },
    { limits, volumes: [] },
  );
  const countError = forkCountError(countText);
  const all = countError ? { ...errors, count: countError } : errors;
  const count = countError ? 1 : Number(countText.trim());
  return { body: countError ? null : body, draft, count, errors: all };
}
