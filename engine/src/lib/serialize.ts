import type { FastifySerializerCompiler } from "fastify";
import type { z } from "zod";
import { ApiError } from "../errors.js";

/**
 * Fastify's serializer for the routes' zod response schemas. Unchecked (production), an answer is
 * JSON.stringify'd as it is: the schemas document it, they do not reshape it. Checked (every test
 * engine), an answer that does not match its documented schema is a 500 naming the route and the
 * field, so docs/openapi.json cannot drift from what the engine sends. Either way the original
 * object is sent, fields the schema does not list included.
 */
export function responseSerializer(check: boolean): FastifySerializerCompiler<z.ZodType> {
  if (!check) return () => (data) => JSON.stringify(data);
  return ({ schema, method, url }) =>
    (data) => {
      const r = schema.safeParse(data);
      if (!r.success) {
        const issues = r.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
        throw ApiError.internal(
          "The answer does not match its documented schema",
          new Error(`${method} ${url}: ${issues}`),
        );
      }
      return JSON.stringify(data);
    };
}
