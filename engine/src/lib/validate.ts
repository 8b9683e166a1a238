import type { FastifySchemaCompiler } from "fastify";
import type { z } from "zod";
import { ApiError, zodDetail } from "../errors.js";

/** Where a failure is reported, as FastAPI names the request parts (`loc[0]` of a 422's detail). */
type Where = "body" | "query" | "path" | "header";

const WHERE: Record<string, Where> = { body: "body", querystring: "query", params: "path", headers: "header" };

/** Parses input with a zod schema; failures become FastAPI-style 422s naming the field. */
export function parse<S extends z.ZodType>(schema: S, input: unknown, where: Where): z.infer<S> {
  // No body (or JSON null) reads as {}: pause, resume and friends take none.
  const r = schema.safeParse(input ?? (where === "body" ? {} : input));
  if (!r.success) throw new ApiError("validation_error", zodDetail(r.error, where));
  return r.data;
}

/**
 * Fastify's validator for the routes' zod schemas (params, querystring, body): the parsed value
 * replaces the request's part, and a failure is the contract's 422 `validation_error` with a
 * FastAPI detail, which the app's error handler sends as it is.
 */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    try {
      return { value: parse(schema, data, WHERE[httpPart ?? "body"] ?? "body") };
    } catch (e) {
      return { error: e as ApiError };
    }
  };
