import { queryOptions } from "@tanstack/react-query";
import { apiJson, apiVoid } from "../api/core";
import { object, type Reader } from "../api/read";
import { decodeBase64, encodeBase64 } from "../orkestr/base64";
import { OrkestrError } from "../orkestr/errors";
import { path } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { ExecResult } from "../orkestr/schemas/exec";
import type { DirectoryListing, FileContent, FileEntry, PresignedUrl, WrittenFile } from "../orkestr/schemas/files";

// The Files tab's calls, all through Baton's /api/v1 proxy. Reads and writes of small files use the
// JSON routes (base64 or utf8 bodies); large uploads and every download go through the presigned
// route, which Baton answers with its own streaming files/raw URL (lib/server/file-links.ts).

const filesPath = (id: string) => path`/api/v1/sandboxes/${id}/files`;
/** GET …/files answers a listing for a folder and the content for a file: the caller says which it expects. */
const readFilesAnswer = object<Partial<DirectoryListing> & Partial<FileContent>>(
  {},
  { entries: "array", content: "string", encoding: "string", size: "number" },
);
const readEntries: Reader<FileEntry[] | (Partial<DirectoryListing> & Partial<FileContent>)> = (value) =>
  Array.isArray(value) ? value.map(object<FileEntry>({ name: "string" })) : readFilesAnswer(value);
export const readExecResult = object<ExecResult>({}, { stdout: "string", stderr: "string", exit_code: "number" });
const readWritten = object<WrittenFile>({ path: "string" });
const readPresigned = object<PresignedUrl>({ url: "string" });

/** Files up to this size are sent as one JSON body; larger ones stream through presign-upload (with progress). */
export const JSON_UPLOAD_MAX_BYTES = 1024 * 1024;
/** Largest file the viewer fetches and shows (the JSON read route caps at 10 MiB; a browser textarea much lower). */
export const VIEWER_MAX_BYTES = 1024 * 1024;

export const fileKeys = {
  all: (id: string) => ["sandboxes", "files", id] as const,
  dir: (id: string, path: string) => ["sandboxes", "files", id, "dir", path] as const,
  file: (id: string, path: string) => ["sandboxes", "files", id, "file", path] as const,
};

/** A directory entry as the browser shows it: `is_dir` settled from either spelling, path always set. */
export interface Entry {
  name: string;
  path: string;
  isDir: boolean;
  size: number | null;
  modifiedAt: string | number | null;
}

/** The upstream's entries, tolerant of both `is_dir` and `type`, directories first, then by name. */
export function normalizeEntries(dir: string, entries: FileEntry[]): Entry[] {
  return entries
    .map((e) => ({
      name: e.name,
      path: e.path ?? joinPath(dir, e.name),
      isDir: e.is_dir ?? e.type === "directory",
      size: typeof e.size === "number" ? e.size : null,
      modifiedAt: e.modified_at ?? null,
    }))
    .sort((a, b) => (a.isDir === b.isDir ? a.name.localeCompare(b.name) : a.isDir ? -1 : 1));
}

/** `/workspace` + `a` → `/workspace/a` (no doubled or trailing slash). */
export function joinPath(dir: string, name: string): string {
  return `${dir.replace(/\/+$/, "")}/${name.replace(/^\/+/, "")}`;
}

/** The directory part of a path (`/workspace/a/b.txt` → `/workspace/a`); `/` stays `/`. */
export function parentPath(path: string): string {
  const cut = path.replace(/\/+$/, "").lastIndexOf("/");
  return cut <= 0 ? "/" : path.slice(0, cut);
}

/**
 * Why a new file or folder name is not acceptable, or null. One path segment only: the name is
 * joined to the current folder, so `/` would silently create elsewhere, and `.`/`..` name no new entry.
 */
export function invalidName(name: string): string | null {
  if (!name.trim()) return "Enter a name.";
  if (name.includes("/")) return "A name cannot contain “/”: create one folder at a time.";
  if (name === "." || name === "..") return "“.” and “..” are not names you can create.";
  if (name.includes("\0")) return "A name cannot contain a NUL character.";
  if (new TextEncoder().encode(name).length > 255) return "A name can be at most 255 bytes long.";
  return null;
}

/** A POSIX shell single-quoted word. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export const fileQueries = {
  /** A directory's entries. The upstream decides file vs directory: a file here is a caller's mistake. */
  dir: (id: string, path: string) =>
    queryOptions({
      queryKey: fileKeys.dir(id, path),
      queryFn: async ({ signal }): Promise<Entry[]> => {
        const res = await apiJson({ path: filesPath(id), query: { path }, signal }, readEntries);
        if (Array.isArray(res)) return normalizeEntries(path, res);
        if (Array.isArray(res.entries)) return normalizeEntries(path, res.entries);
        throw new OrkestrError({ status: 400, code: "not_a_directory", detail: `"${path}" is a file, not a folder.` });
      },
    }),
  /** A file's bytes (base64 from the upstream, or text when it says utf8). */
  file: (id: string, path: string) =>
    queryOptions({
      queryKey: fileKeys.file(id, path),
      queryFn: async ({ signal }): Promise<{ bytes: Uint8Array; size: number | null }> => {
        const res = await apiJson({ path: filesPath(id), query: { path }, signal }, readFilesAnswer);
        const content = res.content;
        if (typeof content !== "string")
          throw new OrkestrError({ status: 400, code: "not_a_file", detail: `"${path}" is a folder, not a file.` });
        const bytes =
          res.encoding && /^utf-?8$/i.test(res.encoding) ? new TextEncoder().encode(content) : decodeBase64(content);
        return { bytes, size: typeof res.size === "number" ? res.size : bytes.length };
      },
      // The editor works on what it loaded: no refetch under the user's hands.
      staleTime: Infinity,
      refetchOnWindowFocus: false,
    }),
};

export const fileMutations = {
  /** Writes text as UTF-8 (the editor's save). Parents are created by the upstream. */
  writeText: (id: string, path: string, text: string) =>
    apiJson({ method: "POST", path: filesPath(id), body: { path, content: text, encoding: "utf8" } }, readWritten),
  /** A small file's bytes in one JSON body (base64). */
  writeBytes: (id: string, path: string, bytes: Uint8Array) =>
    apiJson(
      { method: "POST", path: filesPath(id), body: { path, content: encodeBase64(bytes), encoding: "base64" } },
      readWritten,
    ),
  remove: (id: string, path: string, recursive: boolean) =>
    apiVoid({ method: "DELETE", path: filesPath(id), query: { path, recursive: recursive || undefined } }),
  /**
   * The contract has no mkdir route (POST /files writes files only), so a folder is made with
   * `mkdir -p` through exec, which any v1 server runs. A failure comes back as the command's stderr.
   */
  mkdir: async (id: string, dir: string) => {
    const res = await apiJson(
      {
        method: "POST",
        path: path`/api/v1/sandboxes/${id}/exec`,
        body: { command: `mkdir -p -- ${shellQuote(dir)}`, cwd: "/", timeout_seconds: 30 },
      },
      readExecResult,
    );
    if (res.exit_code !== 0) {
      throw new OrkestrError({
        status: 422,
        code: "mkdir_failed",
        detail: (res.stderr ?? "").trim() || `mkdir exited with code ${res.exit_code ?? "unknown"}.`,
      });
    }
  },
  presignUpload: (id: string, path: string, maxBytes: number) =>
    apiJson(
      { method: "POST", path: `${filesPath(id)}/presign-upload`, body: { path, max_bytes: Math.max(1, maxBytes) } },
      readPresigned,
    ),
  presignDownload: (id: string, path: string) =>
    apiJson({ method: "POST", path: `${filesPath(id)}/presign-download`, body: { path } }, readPresigned),
};

/**
 * Text the viewer can show: valid UTF-8 without NUL bytes (a NUL in the first 8 KiB is how git and
 * grep tell binary files apart). Null for anything else.
 */
export function decodeText(bytes: Uint8Array): string | null {
  if (bytes.subarray(0, 8192).includes(0)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
