import { z } from "zod";
import { decodeBase64, encodeBase64, utf8Decode, utf8Encode } from "../base64";
import type { RequestOptions } from "../core";
import { OrkestrError } from "../errors";
import { path } from "../path";
import { APIResource } from "../resource";
import type { Timestamp } from "../schemas/common";
import {
  DirectoryListing,
  FileContent,
  FileEntry,
  PresignedUrl,
  WriteBatchResult,
  WrittenFile,
} from "../schemas/files";

/** GET /files answers a file or a directory; a bare array is a directory too (`?list=true` style). */
const FileOrDirectory = z.union([
  z.array(FileEntry).transform((entries) => ({ type: "directory" as const, path: null, entries })),
  DirectoryListing.transform((d) => ({ ...d, type: "directory" as const })),
  FileContent.transform((f) => ({ ...f, type: "file" as const })),
]);
export type FileOrDirectory = z.infer<typeof FileOrDirectory>;

/** A file read through the JSON API, content decoded. */
export interface FileData {
  path: string;
  size: number;
  modified_at: Timestamp | null;
  bytes: Uint8Array;
}

export type FileBody = string | Uint8Array;

export class Files extends APIResource {
  // GET /v1/sandboxes/{id}/files?path= – a file (base64) or a directory listing, as the server decides
  async stat(id: string, filePath: string, options?: RequestOptions): Promise<FileOrDirectory> {
    return this.core.json({
      method: "GET",
      path: path`/sandboxes/${id}/files`,
      query: { path: filePath },
      schema: FileOrDirectory,
      options,
    });
  }

  /** A file's bytes (≤ 10 MiB through JSON; use presignDownload() or readRaw() for bigger ones). */
  async read(id: string, filePath: string, options?: RequestOptions): Promise<FileData> {
    const r = await this.stat(id, filePath, options);
    if (r.type !== "file")
      throw new OrkestrError({
        status: 409,
        code: "is_a_directory",
        detail: `"${filePath}" is a directory, not a file.`,
      });
    const bytes = decodeContent(r.content, r.encoding, () =>
      this.core.parseError(
        { method: "GET", path: path`/sandboxes/${id}/files` },
        null,
        `the content of "${filePath}" is not valid base64`,
        r.content.slice(0, 100),
      ),
    );
    return {
      path: r.path ?? filePath,
      size: typeof r.size === "number" ? r.size : bytes.length,
      modified_at: r.modified_at ?? null,
      bytes,
    };
  }

  /** A file as UTF-8 text. */
  async readText(id: string, filePath: string, options?: RequestOptions): Promise<string> {
    return utf8Decode((await this.read(id, filePath, options)).bytes);
  }

  /** A directory's entries. */
  async list(id: string, dirPath: string, options?: RequestOptions): Promise<FileEntry[]> {
    const r = await this.stat(id, dirPath, options);
    if (r.type !== "directory")
      throw new OrkestrError({
        status: 409,
        code: "not_a_directory",
        detail: `"${dirPath}" is a file, not a directory.`,
      });
    return r.entries;
  }

  // POST /v1/sandboxes/{id}/files – text or bytes, sent as base64; parents are created
  async write(
    id: string,
    filePath: string,
    content: FileBody,
    opts: { mode?: string } & RequestOptions = {},
  ): Promise<WrittenFile> {
    const { mode, ...options } = opts;
    return this.core.json({
      method: "POST",
      path: path`/sandboxes/${id}/files`,
      body: { path: filePath, content: encodeBase64(content), encoding: "base64", ...(mode ? { mode } : {}) },
      idempotent: true,
      schema: WrittenFile,
      options,
    });
  }

  // POST /v1/sandboxes/{id}/files/batch – each row succeeds or fails alone
  async writeBatch(
    id: string,
    files: Record<string, FileBody> | { path: string; content: FileBody; mode?: string }[],
    options?: RequestOptions,
  ): Promise<WriteBatchResult> {
    const rows = Array.isArray(files) ? files : Object.entries(files).map(([p, content]) => ({ path: p, content }));
    const body = {
      files: rows.map((f) => ({
        path: f.path,
        content: encodeBase64(f.content),
        encoding: "base64",
        ...("mode" in f && f.mode ? { mode: f.mode } : {}),
      })),
    };
    return this.core.json({
      method: "POST",
      path: path`/sandboxes/${id}/files/batch`,
      body,
      idempotent: true,
      schema: WriteBatchResult,
      options,
    });
  }

  // DELETE /v1/sandboxes/{id}/files?path=&recursive=
  async delete(id: string, filePath: string, opts: { recursive?: boolean } & RequestOptions = {}): Promise<void> {
    const { recursive, ...options } = opts;
    return this.core.void({
      method: "DELETE",
      path: path`/sandboxes/${id}/files`,
      query: { path: filePath, recursive: recursive ? "true" : undefined },
      options,
    });
  }

  // POST /v1/sandboxes/{id}/files/presign-upload – a PUT URL that needs no token
  async presignUpload(
    id: string,
    filePath: string,
    opts: { expiresInSeconds?: number; maxBytes?: number } & RequestOptions = {},
  ): Promise<PresignedUrl> {
    const { expiresInSeconds, maxBytes, ...options } = opts;
    const body = {
      path: filePath,
      ...(expiresInSeconds !== undefined ? { expires_in_seconds: expiresInSeconds } : {}),
      ...(maxBytes !== undefined ? { max_bytes: maxBytes } : {}),
    };
    return this.core.json({
      method: "POST",
      path: path`/sandboxes/${id}/files/presign-upload`,
      body,
      idempotent: true,
      schema: PresignedUrl,
      options,
    });
  }

  // POST /v1/sandboxes/{id}/files/presign-download – a GET URL that needs no token
  async presignDownload(
    id: string,
    filePath: string,
    opts: { expiresInSeconds?: number } & RequestOptions = {},
  ): Promise<PresignedUrl> {
    const { expiresInSeconds, ...options } = opts;
    const body = {
      path: filePath,
      ...(expiresInSeconds !== undefined ? { expires_in_seconds: expiresInSeconds } : {}),
    };
    return this.core.json({
      method: "POST",
      path: path`/sandboxes/${id}/files/presign-download`,
      body,
      idempotent: true,
      schema: PresignedUrl,
      options,
    });
  }

  /** The Bearer-authorized raw-bytes URL of a file (GET/PUT /files/raw?path=). */
  rawUrl(id: string, filePath: string): string {
    return this.core.url(path`/sandboxes/${id}/files/raw`, { path: filePath });
  }

  // GET /v1/sandboxes/{id}/files/raw?path= – the upstream Response, body unread (Range supported)
  async readRaw(id: string, filePath: string, opts: { range?: string } & RequestOptions = {}): Promise<Response> {
    const { range, ...options } = opts;
    return this.core.response({
      method: "GET",
      path: path`/sandboxes/${id}/files/raw`,
      query: { path: filePath },
      headers: { Accept: "*/*", ...(range ? { Range: range } : {}) },
      options,
    });
  }

  // PUT /v1/sandboxes/{id}/files/raw?path= – raw bytes, no base64, no 10 MiB cap
  async writeRaw(
    id: string,
    filePath: string,
    body: Uint8Array | ReadableStream<Uint8Array> | Blob | string,
    options?: RequestOptions,
  ): Promise<WrittenFile> {
    const rawBody = typeof body === "string" ? utf8Encode(body) : body;
    // A streamed body cannot be replayed, so only buffered bodies may be retried.
    const replayable = !(typeof ReadableStream !== "undefined" && rawBody instanceof ReadableStream);
    const opts = replayable ? options : { ...options, maxRetries: 0 };
    return this.core.json({
      method: "PUT",
      path: path`/sandboxes/${id}/files/raw`,
      query: { path: filePath },
      rawBody,
      schema: WrittenFile,
      options: opts,
    });
  }
}

function decodeContent(content: string, encoding: string | null | undefined, bad: () => Error): Uint8Array {
  const enc = (encoding ?? "base64").toLowerCase();
  if (enc === "utf8" || enc === "utf-8" || enc === "text") return utf8Encode(content);
  try {
    return decodeBase64(content);
  } catch {
    throw bad();
  }
}
