import { z } from "zod";
import { Num, openEnum, Timestamp } from "./common";

/**
 * One `entries[]` item of GET /v1/sandboxes/{id}/files on a directory: `name`, `is_dir`, `size` are
 * seed fields; the rest may be absent.
 */
export const FileEntry = z
  .object({
    name: z.string(),
    path: z.string().nullish(),
    is_dir: z.boolean().nullish(),
    type: openEnum(["file", "directory", "symlink", "other"]).nullish(),
    size: Num.nullish(),
    modified_at: Timestamp.nullish(),
  })
  .loose();
export type FileEntry = z.infer<typeof FileEntry>;

/** GET /files?path= on a file: base64 `content` (or plain text when `encoding` says utf8). */
export const FileContent = z
  .object({
    path: z.string().nullish(),
    type: z.literal("file").optional(),
    size: Num.nullish(),
    content: z.string(),
    encoding: z.string().nullish(),
    modified_at: Timestamp.nullish(),
  })
  .loose();
export type FileContent = z.infer<typeof FileContent>;

/** GET /files?path= on a directory. */
export const DirectoryListing = z
  .object({ path: z.string().nullish(), type: z.literal("directory").optional(), entries: z.array(FileEntry) })
  .loose();
export type DirectoryListing = z.infer<typeof DirectoryListing>;

/** POST /files. */
export const WriteFileBody = z.object({
  path: z.string().min(1),
  content: z.string(),
  encoding: z.enum(["base64", "utf8"]).default("base64"),
  mode: z
    .string()
    .regex(/^0?[0-7]{3,4}$/)
    .optional(),
});
export type WriteFileBody = z.input<typeof WriteFileBody>;

export const WrittenFile = z.object({ path: z.string(), size: Num.nullish() }).loose();
export type WrittenFile = z.infer<typeof WrittenFile>;

/** POST /files/batch. */
export const WriteBatchBody = z.object({ files: z.array(WriteFileBody).min(1) });
export type WriteBatchBody = z.input<typeof WriteBatchBody>;

/** Per-file results: a bad row fails alone (seed 003), so both lists may be filled with status 200. */
export const WriteBatchResult = z
  .object({
    written: z
      .array(WrittenFile)
      .nullish()
      .transform((w) => w ?? []),
    errors: z
      .array(
        z.object({ path: z.string().nullish(), detail: z.unknown().optional(), code: z.string().nullish() }).loose(),
      )
      .nullish()
      .transform((e) => e ?? []),
  })
  .loose();
export type WriteBatchResult = z.infer<typeof WriteBatchResult>;

/** POST /files/presign-upload and /presign-download. */
export const PresignBody = z.object({
  path: z.string().min(1),
  expires_in_seconds: z.number().int().positive().optional(),
  max_bytes: z.number().int().positive().optional(),
});
export type PresignBody = z.input<typeof PresignBody>;

export const PresignedUrl = z
  .object({
    url: z.string(),
    method: z.string().nullish(),
    headers: z.record(z.string(), z.string()).nullish(),
    expires_at: Timestamp.nullish(),
  })
  .loose();
export type PresignedUrl = z.infer<typeof PresignedUrl>;
