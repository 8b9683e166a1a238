import type { FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import type { FastifyInstance } from "fastify";
import { createJsonSchemaTransform, createJsonSchemaTransformObject } from "fastify-type-provider-zod";
import type { OpenAPIV3_1 } from "openapi-types";

/**
 * The engine's OpenAPI 3.1 document, generated from the route schemas (zod, through
 * fastify-type-provider-zod) by @fastify/swagger. It describes the /v1 API: the loopback admin
 * routes and /healthz are the engine's own and are left out. docs/openapi.json is this document,
 * written by `npm run openapi`; a test fails when the two differ.
 */
const transform = createJsonSchemaTransform({ zodToJsonConfig: { target: "draft-2020-12" } });
const transformObject = createJsonSchemaTransformObject({ zodToJsonConfig: { target: "draft-2020-12" } });

export const OPENAPI_OPTIONS: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: "3.1.0",
    info: {
      title: "orkestr Sandboxes API (Baton engine)",
      version: "1",
      description:
        "The orkestr v1 API as Baton's local engine serves it. Every route needs `Authorization: Bearer ork_…` " +
        "(reads: the sandboxes:read scope; anything that changes state: sandboxes:write), except a presigned " +
        "files/raw URL. Errors are `{detail, code}`; a 422's detail is FastAPI's `[{loc, msg, type}]`. " +
        "Resource lists are newest first (events and build logs oldest first) and cursor-paged: `?limit=&cursor=`, " +
        "the next cursor in the `X-Next-Cursor` header. A query key given twice keeps its first value, " +
        "except `status` on the sandbox list.",
    },
    servers: [{ url: "http://127.0.0.1:8787", description: "A local engine (npm run engine)" }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "An ork_ API token" } },
    },
    security: [{ bearer: [] }],
  },
  transform: (input) => {
    const out = transform(input);
    if (!input.url.startsWith("/v1/")) return { ...out, schema: { ...out.schema, hide: true } };
    return out;
  },
  transformObject,
};

/** Every operation answers errors in one shape: referenced once, not repeated per route. */
function withErrorResponses(doc: OpenAPIV3_1.Document): OpenAPIV3_1.Document {
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item ?? {})) {
      if (!op || typeof op !== "object" || !("responses" in op)) continue;
      const responses = (op as OpenAPIV3_1.OperationObject).responses ?? {};
      responses["4XX"] = {
        description: "The request was refused: `{detail, code}`",
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      };
      (op as OpenAPIV3_1.OperationObject).responses = responses;
    }
  }
  return doc;
}

/**
 * Every named schema is generated twice, as read (…Input) and as written; response-only schemas
 * never appear as input, so their unused input twins are dropped.
 */
function withoutUnusedInputs(doc: OpenAPIV3_1.Document): OpenAPIV3_1.Document {
  const schemas = doc.components?.schemas ?? {};
  const text = JSON.stringify({ ...doc, components: { ...doc.components, schemas: {} } });
  for (const name of Object.keys(schemas))
    if (name.endsWith("Input") && !text.includes(`"#/components/schemas/${name}"`)) delete schemas[name];
  return doc;
}

/** The document, as served at GET /v1/openapi.json and committed as docs/openapi.json. */
export function openApiDocument(app: FastifyInstance): OpenAPIV3_1.Document {
  return withoutUnusedInputs(withErrorResponses(structuredClone(app.swagger() as OpenAPIV3_1.Document)));
}
