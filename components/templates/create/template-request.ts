import type { CreateTemplateBody, Template } from "../../../lib/orkestr/schemas/templates";
import { newRow, type KeyValueRow } from "../../sandboxes/create/create-request";

// The template create form's state → POST /v1/templates body, with the checks the engine makes
// (engine/src/routes/templates.ts), so a mistake is named at its field before anything is sent.

export interface TemplateFormState {
  name: string;
  baseImage: string;
  /** One shell command per line; blank lines are skipped. */
  steps: string;
  env: KeyValueRow[];
}

export type TemplateFieldErrors = Partial<Record<"name" | "base_image" | "steps" | "env", string>> &
  Record<string, string>;

export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const MAX_STEPS = 100;

/** The steps of the editor's text: one per line, blank (or whitespace-only) lines left out. */
export function parseSteps(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== "");
}

export function buildTemplateRequest(state: TemplateFormState): {
  body: CreateTemplateBody;
  errors: TemplateFieldErrors;
} {
  const errors: TemplateFieldErrors = {};
  const name = state.name.trim();
  if (!name) errors.name = "Give the template a name.";
  else if (!NAME_PATTERN.test(name))
    errors.name = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit.";
  else if (/^tmpl_/i.test(name)) errors.name = "Names must not start with tmpl_ (that is how template ids start).";
  if (!state.baseImage) errors.base_image = "Choose a base image.";
  const steps = parseSteps(state.steps);
  if (steps.length > MAX_STEPS) errors.steps = `At most ${MAX_STEPS} steps (this has ${steps.length}).`;
  const env: Record<string, string> = {};
  for (const row of state.env) {
    const key = row.key.trim();
    if (!key && !row.value) continue; // a spare empty row
    const at = `env.${row.rowId}`;
    if (!key) errors[at] = "Give this value a name.";
    else if (!ENV_NAME.test(key)) errors[at] = "Names are letters, digits and _, and do not start with a digit.";
    else if (key in env) errors[at] = `"${key}" is already set above.`;
    else env[key] = row.value;
  }
  const body: CreateTemplateBody = { name, base_image: state.baseImage, steps };
  if (Object.keys(env).length) body.env = env;
  return { body, errors };
}

/** A name not taken yet for a copy: "web" → "web-2", "web-2" → "web-3". */
export function nextName(name: string, taken: ReadonlySet<string>): string {
  const m = /^(.*?)-(\d+)$/.exec(name);
  const stem = m ? m[1]! : name;
  let n = m ? Number(m[2]) + 1 : 2;
  for (;;) {
    const candidate = `${stem}-${n}`.slice(0, 64);
    if (!taken.has(candidate)) return candidate;
    n++;
  }
}

/**
 * The form prefilled from an existing template ("Edit": templates are immutable, so this builds a new
 * one). Env values are never sent back by the API, only names: the rows come back with empty values.
 */
export function stateFrom(
  template: Template | null,
  taken: ReadonlySet<string>,
  defaultBase: string,
): TemplateFormState {
  if (!template) return { name: "", baseImage: defaultBase, steps: "", env: [newRow()] };
  const envKeys = ((template as { env_keys?: unknown }).env_keys as string[] | undefined) ?? [];
  return {
    name: nextName(template.name ?? template.id, taken),
    baseImage: template.base_image ?? defaultBase,
    steps: (template.steps ?? []).join("\n"),
    env: envKeys.length ? envKeys.map((k) => newRow(k, "")) : [newRow()],
  };
}
