/**
 * Response checks of the browser core (lib/api/core.ts), without a schema library. Baton's route
 * handlers have already parsed the upstream answer with lib/orkestr's zod schemas, so a Reader only
 * confirms the answer has the shape the UI relies on (an object with a string `id`, a list…) and
 * throws, naming the field, when it does not: the core turns that into an OrkestrParseError.
 * Everything else passes through as the server sent it, typed by the schema's inferred type.
 */
export type Reader<T> = (value: unknown) => T;

type Kind = "string" | "number" | "boolean" | "object" | "array";

function kindOf(v: unknown): Kind | "null" | "undefined" | "other" {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  const t = typeof v;
  return t === "string" || t === "number" || t === "boolean" || t === "object" || t === "undefined" ? t : "other";
}

/**
 * An object whose `required` fields have these kinds and whose `optional` ones, when present and not
 * null, do too. `T` is the type it stands for (from lib/orkestr/schemas, imported as a type).
 */
export function object<T>(required: Record<string, Kind> = {}, optional: Record<string, Kind> = {}): Reader<T> {
  return (value) => {
    if (kindOf(value) !== "object") throw new Error(`expected an object, got ${kindOf(value)}`);
    const o = value as Record<string, unknown>;
    for (const [field, kind] of Object.entries(required))
      if (kindOf(o[field]) !== kind) throw new Error(`${field}: expected ${kind}, got ${kindOf(o[field])}`);
    for (const [field, kind] of Object.entries(optional)) {
      const k = kindOf(o[field]);
      if (k !== "null" && k !== "undefined" && k !== kind) throw new Error(`${field}: expected ${kind}, got ${k}`);
    }
    return value as T;
  };
}

/** A JSON array, each item checked. */
export function arrayOf<T>(item: Reader<T>): Reader<T[]> {
  return (value) => {
    if (!Array.isArray(value)) throw new Error(`expected a list, got ${kindOf(value)}`);
    return value.map((v, i) => {
      try {
        return item(v);
      } catch (e) {
        throw new Error(`item ${i}: ${e instanceof Error ? e.message : String(e)}`);
      }
    });
  };
}

/** Anything, the body unread (a 202 or 204 whose content the caller ignores). */
export const ignored: Reader<void> = () => undefined;
