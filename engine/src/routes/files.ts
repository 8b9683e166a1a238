import fs from "node:fs";
import type { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { EngineTypeProvider } from "./plugin.js";
import { z } from "zod";
import { accountOf } from "../auth.js";
import { ApiError } from "../errors.js";
import { iso } from "../lib/time.js";
import { SandboxIdParams } from "../schemas.js";
import { BatchResult, FileRead, FileWritten, NoContent, PresignedUrl } from "../responses.js";
import { CappedBuffer, runExec } from "../runtime/exec.js";
import { shq } from "../runtime/sandbox-command.js";
import {
  decodeContent,
  MAX_BATCH_BYTES,
  MAX_JSON_FILE_BYTES,
  normalizeApiPath,
  parseMode,
  SandboxFiles,
  sign,
  verifySigned,
} from "../services/files.js";
import type { ResourcePlugin } from "./plugin.js";

/** Batch bodies carry up to 25 MiB decoded as base64 (×4/3) plus JSON framing. */
const BATCH_BODY_LIMIT = 36 * 1024 * 1024;
const MAX_PRESIGN_SECONDS = 604_800;

const Encoding = z.enum(["base64", "utf8", "utf-8"]).default("base64");
const WriteFile = z.object({
  path: z.string().min(1),
  content: z.string(),
  encoding: Encoding,
  mode: z.string().optional(),
});
const BatchBody = z.object({ files: z.array(z.unknown()).min(1).max(1000) });
const flag = z
  .enum(["true", "false", "1", "0", ""])
  .optional()
  .transform((v) => v === "true" || v === "1");
const PathQuery = z.object({ path: z.string().min(1), list: flag, recursive: flag });
const Presign = z.object({
  path: z.string().min(1),
  expires_in_seconds: z.number().int().min(1).max(MAX_PRESIGN_SECONDS).default(300),
});
const PresignUpload = Presign.extend({ max_bytes: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional() });

/** A presigned URL's parameters (no token needed): checked by the handler, not here. */
const RawQuery = z.object({
  path: z.string().min(1),
  exp: z.string().optional().describe("Presigned URLs: expiry, unix seconds"),
  sig: z.string().optional().describe("Presigned URLs: the signature"),
  max: z.string().optional().describe("Presigned uploads: the most bytes the URL accepts"),
});
type RawRequest = FastifyRequest<{ Params: { id: string }; Querystring: z.infer<typeof RawQuery> }>;

const tags = ["files"];
/**
 * Files: JSON read/list/write/delete (…/files), batch writes, presigned URLs and raw bytes
 * (…/files/raw, the one route a presigned URL reaches without a token).
 */
export const fileRoutes: ResourcePlugin = async (app, { ctx }) => {
  const { sandboxes, events } = ctx;

  /** The running sandbox (auto-resumed if it asked for it) and its file tree. */
  const open = async (account: string, id: string) => {
    const { row, live } = await sandboxes.running(account, id);
    return { row, files: new SandboxFiles(live.proc.spec) };
  };

  app.get(
    "/sandboxes/:id/files",
    {
      schema: {
        tags,
        summary: "Read a file (base64) or list a directory (list=true: the entries alone)",
        params: SandboxIdParams,
        querystring: PathQuery,
        response: { 200: FileRead },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const q = req.query;
      const p = normalizeApiPath(q.path);
      const { files } = await open(accountOf(req), id);
      files.locate(p);
      const r = files.read(p);
      if (r.type === "directory") {
        if (r.truncated) reply.header("X-Truncated", "true");
        return q.list
          ? r.entries
          : { path: p, type: "directory" as const, entries: r.entries, ...(r.truncated ? { truncated: true } : {}) };
      }
      if (q.list) throw new ApiError("not_a_directory", `"${p}" is a file; list=true needs a directory`);
      return {
        path: p,
        type: "file" as const,
        size: r.size,
        content: r.content.toString("base64"),
        encoding: "base64" as const,
        modified_at: r.modified_at,
      };
    },
  );

  app.post(
    "/sandboxes/:id/files",
    {
      schema: {
        tags,
        summary: "Write one file (parents created)",
        params: SandboxIdParams,
        body: WriteFile,
        response: { 201: FileWritten },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const body = req.body;
      const p = normalizeApiPath(body.path);
      const mode = parseMode(body.mode);
      const data = decodeContent(body.content, body.encoding === "base64" ? "base64" : "utf8", MAX_JSON_FILE_BYTES);
      const { row, files } = await open(accountOf(req), id);
      files.locate(p);
      const written = files.write(p, data, mode);
      events.record(row.id, "file.write", { path: written.path, size: written.size });
      return reply.status(201).send(written);
    },
  );

  app.delete(
    "/sandboxes/:id/files",
    {
      schema: {
        tags,
        summary: "Delete a file, or a directory (recursive=true for a non-empty one)",
        params: SandboxIdParams,
        querystring: PathQuery,
        response: { 204: NoContent },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const q = req.query;
      const p = normalizeApiPath(q.path);
      const { row, files } = await open(accountOf(req), id);
      files.locate(p);
      const removed = files.remove(p, q.recursive);
      if (removed.tree) {
        const { live } = await ctx.sandboxes.running(accountOf(req), row.id);
        const stderr = new CappedBuffer(4096);
        const r = await runExec(
          live.proc,
          { command: `rm -rf -- ${shq(p)}`, cwd: "/", env: {}, timeoutMs: 300_000 },
          { onStdout: () => undefined, onStderr: (c) => stderr.push(c) },
        ).done;
        if (r.exit_code !== 0)
          throw new ApiError(
            "internal_error",
            `Deleting "${p}" failed: ${stderr.text().trim() || `rm exited with ${r.exit_code}`}`,
          );
      }
      events.record(row.id, "file.delete", {
        path: removed.path,
        size: removed.size,
        type: removed.type,
        ...(q.recursive ? { recursive: true } : {}),
      });
      return reply.status(204).send();
    },
  );

  app.post(
    "/sandboxes/:id/files/batch",
    {
      bodyLimit: BATCH_BODY_LIMIT,
      schema: {
        tags,
        summary: "Write many files: each row succeeds or fails alone (25 MiB decoded in all)",
        params: SandboxIdParams,
        body: BatchBody,
        response: { 200: BatchResult },
      },
    },
    async (req) => {
      const { id } = req.params;
      const { files: rows } = req.body;
      // Decode everything first: the 25 MiB total is all-or-nothing, row errors are not.
      const decoded: ({ path: string; data: Buffer; mode?: number } | { path: string; error: ApiError })[] = [];
      let total = 0;
      rows.forEach((raw, i) => {
        const rawPath = typeof (raw as { path?: unknown })?.path === "string" ? (raw as { path: string }).path : "";
        try {
          const row = WriteFile.safeParse(raw);
          if (!row.success) {
            throw new ApiError(
              "validation_error",
              row.error.issues.map((x) => `${["files", i, ...x.path].map(String).join(".")}: ${x.message}`).join("; "),
            );
          }
          const p = normalizeApiPath(row.data.path);
          const mode = parseMode(row.data.mode);
          const data = decodeContent(
            row.data.content,
            row.data.encoding === "base64" ? "base64" : "utf8",
            MAX_JSON_FILE_BYTES,
            ["body", "files", i, "content"],
          );
          total += data.length;
          decoded.push({ path: p, data, mode });
        } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          decoded.push({ path: rawPath, error: e });
        }
      });
      if (total > MAX_BATCH_BYTES) {
        throw new ApiError(
          "payload_too_large",
          `The batch holds ${total} bytes; files/batch takes at most ${MAX_BATCH_BYTES} bytes in total. Split it, or use files/presign-upload for large files.`,
          { size: total, limit: MAX_BATCH_BYTES },
        );
      }
      const { row, files } = await open(accountOf(req), id);
      const written: { path: string; size: number }[] = [];
      const errors: { path: string; detail: string; code: string }[] = [];
      for (const d of decoded) {
        try {
          if ("error" in d) throw d.error;
          files.locate(d.path);
          const w = files.write(d.path, d.data, d.mode);
          events.record(row.id, "file.write", { path: w.path, size: w.size });
          written.push(w);
        } catch (e) {
          if (!(e instanceof ApiError)) throw e;
          errors.push({
            path: d.path,
            detail: typeof e.detail === "string" ? e.detail : JSON.stringify(e.detail),
            code: e.code,
          });
        }
      }
      return { written, errors };
    },
  );

  /** Absolute URL on the origin the caller used (Host header), so it works through port maps. */
  const rawUrl = (req: FastifyRequest, sandboxId: string, params: Record<string, string>) => {
    const host = /^[A-Za-z0-9.\-:[\]]+$/.test(req.host ?? "")
      ? req.host
      : `127.0.0.1:${req.socket.localPort ?? ctx.config.port}`;
    const qs = new URLSearchParams(params).toString();
    return `${req.protocol}://${host}/v1/sandboxes/${encodeURIComponent(sandboxId)}/files/raw?${qs}`;
  };

  /** A files/raw URL for one method on one path that needs no token: signed for this account, sandbox and path. */
  const presign = async (
    req: FastifyRequest,
    id: string,
    method: "GET" | "PUT",
    body: { path: string; expires_in_seconds: number; max_bytes?: number },
  ) => {
    const p = normalizeApiPath(body.path);
    const { row, files } = await open(accountOf(req), id);
    files.locate(p);
    const exp = Math.floor(Date.now() / 1000) + body.expires_in_seconds;
    const maxBytes = method === "PUT" ? body.max_bytes : undefined;
    const sig = sign(ctx.signingKey, { method, account: row.account_id, sandboxId: row.id, path: p, exp, maxBytes });
    const params: Record<string, string> = { path: p, exp: String(exp) };
    if (maxBytes !== undefined) params.max = String(maxBytes);
    params.sig = sig;
    return { url: rawUrl(req, row.id, params), method, expires_at: iso(exp * 1000) };
  };

  app.post(
    "/sandboxes/:id/files/presign-upload",
    {
      schema: {
        tags,
        summary: "A PUT URL for files/raw that needs no token",
        params: SandboxIdParams,
        body: PresignUpload,
        response: { 200: PresignedUrl },
      },
    },
    async (req) => ({
      ...(await presign(req, req.params.id, "PUT", req.body)),
      headers: { "Content-Type": "application/octet-stream" },
    }),
  );

  app.post(
    "/sandboxes/:id/files/presign-download",
    {
      schema: {
        tags,
        summary: "A GET URL for files/raw that needs no token",
        params: SandboxIdParams,
        body: Presign,
        response: { 200: PresignedUrl },
      },
    },
    async (req) => presign(req, req.params.id, "GET", req.body),
  );

  /**
   * Raw bytes. These routes are the API's one "presigned" exemption: the auth hook lets a request
   * through without a token only when it carries `sig` and no Authorization header; such a request
   * must then prove itself here. With a Bearer token the hook already checked the scope, and
   * exp/sig are ignored. Returns the account the request acts for: the token's, or the one the URL
   * was signed for.
   */
  const authorizeRaw = (
    req: FastifyRequest,
    method: "GET" | "PUT",
    id: string,
    p: string,
    q: z.infer<typeof RawQuery>,
  ): { account: string; maxBytes?: number } => {
    if (req.token) return { account: accountOf(req) };
    // The signature binds the account too. An unknown sandbox is checked against no account at
    // all, so it fails exactly like a forged signature (nothing tells the two apart).
    const account = sandboxes.rowUnscoped(id)?.account_id ?? "";
    return { account, ...verifySigned(ctx.signingKey, q, { method, account, sandboxId: id, path: p }) };
  };

  // Raw routes live in their own scope: every body is a byte stream there, whatever its
  // Content-Type (an uploaded .json is still bytes), and the JSON routes above keep their parser.
  await app.register(async (scope) => {
    const raw = scope.withTypeProvider<EngineTypeProvider>();
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser("*", (_req, payload, done) => done(null, payload));

    // GET (and HEAD) /v1/sandboxes/{id}/files/raw?path= – bytes, with single-range support
    const download = async (request: FastifyRequest, reply: FastifyReply) => {
      // GET and HEAD validate the same params and query (rawSchema below).
      const req = request as RawRequest;
      const { id } = req.params;
      const q = req.query;
      const p = normalizeApiPath(q.path);
      const { account } = authorizeRaw(req, "GET", id, p, q);
      const { files } = await open(account, id);
      files.locate(p);
      const f = files.openForDownload(p);
      const range = parseRange(req.headers.range, f.size);
      if (range === "unsatisfiable") {
        fs.close(f.fd, () => undefined);
        throw new ApiError(
          "range_not_satisfiable",
          `Range "${req.headers.range}" is outside the file (${f.size} bytes)`,
          { size: f.size },
          { "Content-Range": `bytes */${f.size}` },
        );
      }
      const start = range?.start ?? 0;
      const end = range?.end ?? f.size - 1;
      reply
        .header("Content-Type", "application/octet-stream")
        .header("Content-Length", String(Math.max(0, end - start + 1)))
        .header("Accept-Ranges", "bytes")
        .header("Last-Modified", new Date(f.modified_at).toUTCString())
        .header("Content-Disposition", `attachment; filename*=UTF-8''${encodeURIComponent(f.name)}`)
        .header("X-Content-Type-Options", "nosniff")
        .header("Cache-Control", "private, no-store");
      if (range) reply.status(206).header("Content-Range", `bytes ${start}-${end}/${f.size}`);
      if (req.method === "HEAD" || end < start) {
        fs.close(f.fd, () => undefined);
        return reply.send();
      }
      return reply.send(fs.createReadStream("", { fd: f.fd, start, end, autoClose: true }));
    };
    // HEAD is its own route: Fastify's automatic one would read the whole file and drop it.
    const rawSchema = { params: SandboxIdParams, querystring: RawQuery };
    raw.get(
      "/sandboxes/:id/files/raw",
      {
        exposeHeadRoute: false,
        config: { auth: "presigned" },
        schema: {
          tags,
          summary: "Download bytes (single Range supported); a Bearer token or a presigned URL",
          ...rawSchema,
        },
      },
      download,
    );
    raw.head("/sandboxes/:id/files/raw", { config: { auth: "presigned" }, schema: { tags, ...rawSchema } }, download);

    raw.put(
      "/sandboxes/:id/files/raw",
      {
        config: { auth: "presigned" },
        schema: {
          tags,
          summary: "Upload bytes (any Content-Type) into a file; a Bearer token or a presigned URL",
          ...rawSchema,
          response: { 201: FileWritten },
        },
      },
      async (req, reply) => {
        const { id } = req.params;
        const q = req.query;
        const p = normalizeApiPath(q.path);
        const { account, maxBytes } = authorizeRaw(req, "PUT", id, p, q);
        const declared = Number(req.headers["content-length"] ?? NaN);
        if (maxBytes !== undefined && declared > maxBytes) {
          throw new ApiError(
            "payload_too_large",
            `Content-Length ${declared} exceeds this URL's max_bytes (${maxBytes})`,
            { limit: maxBytes },
          );
        }
        const { row, files } = await open(account, id);
        files.locate(p);
        const written = await files.upload(p, req.body as Readable | undefined, maxBytes);
        events.record(row.id, "file.write", { path: written.path, size: written.size });
        return reply.status(201).send(written);
      },
    );
  });
};

/**
 * One `bytes=` range (a-b, a-, -n). Anything else, multiple ranges included, is ignored and the
 * whole file is sent, as RFC 9110 allows.
 */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | "unsatisfiable" | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const n = Number(m[2]);
    if (n === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const last = m[2] === "" ? size - 1 : Number(m[2]);
  if (last < start) return null;
  if (start >= size) return "unsatisfiable";
  return { start, end: Math.min(last, size - 1) };
}
