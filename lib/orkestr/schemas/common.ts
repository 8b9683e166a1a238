import { z } from "zod";

/**
 * Building blocks for the console's tolerant reading of the orkestr wire (dispatch on `code`, lists
 * bare or wrapped, SSE or NDJSON streams).
 *
 * Response schemas accept what a real v1 server might plausibly send: extra fields pass through,
 * enums stay open (an unknown status is kept as its string), timestamps may be RFC 3339 strings or
 * unix numbers, and fields the contract is unsure of are optional and nullable. Request bodies are
 * stricter: they exist to build well-formed requests.
 */

/** An RFC 3339 string (what the contract specifies) or a unix time in seconds or milliseconds. */
export const Timestamp = z.union([z.string(), z.number()]);
export type Timestamp = z.infer<typeof Timestamp>;

/**
 * An enum that stays open: the known values give autocompletion and exhaustive handling, any other
 * string is kept as is (a newer server may add states the console does not know yet).
 */
export function openEnum<const T extends readonly [string, ...string[]]>(_values: T) {
  return z.string().transform((s): T[number] | (string & {}) => s);
}

/** A numeric field that some servers send as a numeric string. */
export const Num = z.union([
  z.number(),
  z
    .string()
    .regex(/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i)
    .transform(Number),
]);

/** A string-to-string map such as metadata; values that are not strings are kept as they came. */
export const StringMap = z.record(z.string(), z.unknown());

/** The shape the client returns for every paginated list. */
export interface Page<T> {
  items: T[];
  /** The cursor for the next page, or null on the last page. */
  nextCursor: string | null;
}

/** The paging query of every list route (`?limit=` 1-100, opaque `?cursor=` from `X-Next-Cursor`). */
export const ListQuery = z.object({
  limit: z.number().int().min(1).max(500).optional(),
  cursor: z.string().min(1).optional(),
});
export type ListQuery = z.infer<typeof ListQuery>;

/** Timestamp reading is zod-free so the browser shares it (lib/orkestr/timestamp.ts). */
export { toDate, toMs } from "../timestamp";
