import { ApiError } from "../../errors.js";

/** Content decoding for the JSON file API (base64 or UTF-8 bodies) and file modes. */

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * Decodes a JSON body's `content`: strict base64 (standard or URL alphabet, whitespace ignored) or
 * UTF-8 text. Size is checked before decoding so an oversized body is refused without a copy.
 */
export function decodeContent(
  content: string,
  encoding: "base64" | "utf8",
  limit: number,
  loc: (string | number)[] = ["body", "content"],
): Buffer {
  if (encoding === "utf8") {
    const size = Buffer.byteLength(content, "utf8");
    if (size > limit) throw tooLarge(size, limit);
    return Buffer.from(content, "utf8");
  }
  const compact = /\s/.test(content) ? content.replace(/\s+/g, "") : content;
  if (!BASE64.test(compact) || compact.length % 4 === 1) {
    throw new ApiError("validation_error", [
      { loc, msg: 'content is not valid base64 (send encoding: "utf8" for plain text)', type: "value_error.base64" },
    ]);
  }
  const estimate = Math.floor((compact.length * 3) / 4);
  if (estimate > limit + 2) throw tooLarge(estimate, limit);
  const data = Buffer.from(compact, "base64");
  if (data.length > limit) throw tooLarge(data.length, limit);
  return data;
}

function tooLarge(size: number, limit: number): ApiError {
  return new ApiError(
    "payload_too_large",
    `Content is ${size} bytes; the JSON file API takes at most ${limit} bytes. Use files/presign-upload or PUT files/raw for large files.`,
    { size, limit },
  );
}

/** "0644", "644" or "0o644" → 0o644. Only permission bits: no setuid, setgid or sticky. */
export function parseMode(mode: string | undefined): number | undefined {
  if (mode === undefined) return undefined;
  const m = /^(?:0o?)?([0-7]{3})$/.exec(mode);
  if (!m)
    throw new ApiError("validation_error", [
      { loc: ["body", "mode"], msg: 'mode must be octal permission bits such as "0644"', type: "value_error" },
    ]);
  return parseInt(m[1]!, 8);
}
