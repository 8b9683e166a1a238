import type { z } from "zod";
import { ApiError, zodDetail } from "../errors.js";

/** Parses route input with a zod schema; failures become FastAPI-style 422s naming the field. */
export function parse<S extends z.ZodType>(schema: S, input: unknown, where: "body" | "query" | "path"): z.infer<S> {
  const r = schema.safeParse(input ?? (where === "body" ? {} : input));
  if (!r.success) throw new ApiError("validation_error", zodDetail(r.error, where));
  return r.data;
}
