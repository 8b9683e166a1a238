import { z } from "zod";

/** One FastAPI validation issue: `{loc, msg, type}`. */
export const ValidationIssue = z
  .object({
    loc: z.array(z.union([z.string(), z.number()])).nullish(),
    msg: z.string().nullish(),
    type: z.string().nullish(),
  })
  .loose();
export type ValidationIssue = z.infer<typeof ValidationIssue>;

/**
 * An error body (every route): `{"detail": "...", "code": "..."}` plus optional context fields. `detail`
 * may be a string or a FastAPI array. Other providers' spellings (`message`, `error`,
 * `error_code`, a numeric `code`) are accepted so the client can still say something useful.
 */
export const ApiErrorBody = z
  .object({
    detail: z.union([z.string(), z.array(ValidationIssue), z.record(z.string(), z.unknown()), z.null()]).optional(),
    code: z.union([z.string(), z.number(), z.null()]).optional(),
    error_code: z.string().nullish(),
    message: z.string().nullish(),
    error: z.unknown().optional(),
    retry_after_seconds: z.number().nullish(),
  })
  .loose();
export type ApiErrorBody = z.infer<typeof ApiErrorBody>;
