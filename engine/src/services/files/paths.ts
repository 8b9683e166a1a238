import { ApiError } from "../../errors.js";

/** Paths as the file API takes them: absolute sandbox paths, checked and normalized before any walk. */

const MAX_PATH_BYTES = 4096;
const MAX_NAME_BYTES = 255;

/** What the file API can reach, for the error that says a path is outside it. */
export const REACH = "The local engine's file API reaches /workspace and /tmp, and /persist when a volume is attached";

/**
 * Canonical form of an API path: absolute, no `..`, no NUL, bounded; `.` and repeated or trailing
 * slashes are dropped. Throws 400 invalid_path with the reason.
 */
export function normalizeApiPath(p: string): string {
  if (p.includes("\0")) throw new ApiError("invalid_path", "Path contains a NUL byte");
  if (!p.startsWith("/"))
    throw new ApiError(
      "invalid_path",
      `Path "${p}" is relative; give an absolute sandbox path such as /workspace/main.py`,
    );
  if (Buffer.byteLength(p) > MAX_PATH_BYTES)
    throw new ApiError("invalid_path", `Path is longer than ${MAX_PATH_BYTES} bytes`);
  const parts = p.split("/").filter((s) => s !== "" && s !== ".");
  if (parts.includes(".."))
    throw new ApiError("invalid_path", `Path "${p}" contains a ".." segment; give a normalized absolute path`);
  const long = parts.find((s) => Buffer.byteLength(s) > MAX_NAME_BYTES);
  if (long !== undefined)
    throw new ApiError("invalid_path", `Path component "${long.slice(0, 40)}…" is longer than ${MAX_NAME_BYTES} bytes`);
  return "/" + parts.join("/");
}

export function joinApi(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}
