import { z } from "zod";
import { decodeBase64 } from "../orkestr/base64";
import { WriteBatchBody, WriteFileBody } from "../orkestr/schemas/files";

// Inputs of the /api/v1 proxy routes that the contract's schemas (lib/orkestr/schemas) do not
// already give: route params, and queries as the URL carries them (strings: numbers are coerced,
// flags are "true"/"false"). Bodies are the contract's own schemas wherever they fit.

const Id = z.string().min(1).max(200);

export const SandboxIdParams = z.object({ id: Id });

/** Snapshots, volumes, templates and webhooks: an id, or for some of them a name (the upstream decides). */
export const ResourceIdParams = z.object({ id: Id });

/** GET /api/v1/sandboxes/{id}/previews/{port}. */
export const PreviewParams = z.object({ id: Id, port: z.coerce.number().int().min(1).max(65535) });

/** /api/v1/webhooks/{id}/deliveries/{dlv}. */
export const DeliveryParams = z.object({ id: Id, dlv: Id });

/** A query flag as a URL carries it. */
const Flag = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
const Limit = z.coerce.number().int().min(1).max(500);

/** `?limit=&cursor=`: the upstream keeps its own bounds (1-100 for most lists). */
export const ProxyListQuery = z.object({ limit: Limit.optional(), cursor: z.string().min(1).optional() });

/** `metadata[key]` as a query parameter name (seed 003: `?metadata[key]=value&status=running`). */
const METADATA_PARAM = /^metadata\[(.+)\]$/;

/**
 * GET /api/v1/sandboxes: limit, cursor, status (repeated or comma-joined), template, region and any
 * number of `metadata[key]=value` filters, gathered into `metadata` for the client, which puts them
 * back on the upstream's query string in the same form. Other unknown parameters are ignored.
 */
export const ProxyListSandboxesQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).optional(),
    cursor: z.string().min(1).optional(),
    status: z.union([z.string(), z.array(z.string())]).optional(),
    template: z.string().optional(),
    region: z.string().optional(),
    snapshot: z.string().max(128).optional(),
  })
  .catchall(z.union([z.string(), z.array(z.string())]))
  .transform(({ limit, cursor, status, template, region, snapshot, ...rest }, ctx) => {
    const metadata: Record<string, string> = {};
    for (const [name, value] of Object.entries(rest)) {
      const key = METADATA_PARAM.exec(name)?.[1];
      if (key === undefined) continue;
      if (typeof value !== "string") {
        ctx.addIssue({
          code: "custom",
          message: `give ${name} once (a sandbox has one value per metadata key)`,
          path: [name],
        });
        return z.NEVER;
      }
      metadata[key] = value;
    }
    return {
      limit,
      cursor,
      status,
      template,
      region,
      snapshot,
      ...(Object.keys(metadata).length ? { metadata } : {}),
    };
  });

/** POST /api/v1/sandboxes/{id}/exec/stream: ?format=ndjson asks the upstream for NDJSON instead of SSE. */
export const ExecStreamQuery = z.object({ format: z.enum(["sse", "ndjson"]).optional() });

/** GET /api/v1/sandboxes/{id}/metrics?since=: RFC 3339 or unix seconds, as GET /v1/sandboxes/{id}/metrics takes. */
export const MetricsQuery = z.object({
  since: z
    .string()
    .refine((s) => /^\d+(\.\d+)?$/.test(s) || !Number.isNaN(Date.parse(s)), "must be an RFC 3339 time or unix seconds")
    .optional(),
});

/** GET /api/v1/sandboxes/{id}/events: a page, or with follow=true (or Accept: text/event-stream) the live SSE stream. */
export const EventsQuery = ProxyListQuery.extend({
  type: z.union([z.string(), z.array(z.string())]).optional(),
  follow: Flag.optional(),
});

/** GET /api/v1/sandboxes/{id}/files and files/raw: `path` is checked by the upstream (400 invalid_path). */
export const FilePathQuery = z.object({ path: z.string().min(1).max(4096) });

/** DELETE /api/v1/sandboxes/{id}/files. */
export const DeleteFileQuery = FilePathQuery.extend({ recursive: Flag.optional() });

/** File content as bytes (base64 decoded) or text: the client encodes it for the wire again. */
function decodedContent(
  file: z.output<typeof WriteFileBody>,
  ctx: z.RefinementCtx,
  at: (string | number)[],
): Uint8Array | string {
  if (file.encoding === "utf8") return file.content;
  try {
    return decodeBase64(file.content);
  } catch {
    ctx.addIssue({ code: "custom", message: "is not valid base64", path: [...at, "content"] });
    return z.NEVER;
  }
}

/** POST /api/v1/sandboxes/{id}/files: the contract's body, content decoded. */
export const ProxyWriteFileBody = WriteFileBody.transform((file, ctx) => ({
  path: file.path,
  mode: file.mode,
  content: decodedContent(file, ctx, []),
}));

/** POST /api/v1/sandboxes/{id}/files/batch: the contract's body, each content decoded. */
export const ProxyWriteBatchBody = WriteBatchBody.transform((batch, ctx) =>
  batch.files.map((file, i) => ({
    path: file.path,
    content: decodedContent(file, ctx, ["files", i]),
    ...(file.mode ? { mode: file.mode } : {}),
  })),
);

export const ProxyListSnapshotsQuery = ProxyListQuery.extend({ sandbox_id: z.string().min(1).optional() });
export const ProxyListVolumesQuery = ProxyListQuery.extend({
  region: z.string().min(1).optional(),
  status: z.string().min(1).optional(),
});
export const ProxyListTemplatesQuery = ProxyListQuery.extend({ include_builtin: Flag.optional() });
export const ProxyListDeliveriesQuery = ProxyListQuery.extend({ status: z.string().min(1).optional() });

/** GET /api/v1/templates/{id}/logs: a page (`cursor` is the next line's seq), or with follow=true the live SSE stream. */
export const TemplateLogsQuery = z.object({
  cursor: z.string().min(1).optional(),
  limit: Limit.optional(),
  follow: Flag.optional(),
});
