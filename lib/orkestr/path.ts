import { OrkestrError } from "./errors";

export type QueryValue = string | number | boolean | null | undefined | readonly (string | number | boolean)[];
export type Query = Record<string, QueryValue>;

/**
 * Tagged template for request paths: interpolated values are URL-encoded, and empty, `.` or `..`
 * segments are refused so an id can never climb out of its resource.
 *
 *     path`/sandboxes/${id}/files`
 */
export function path(strings: TemplateStringsArray, ...params: readonly unknown[]): string {
  let out = strings[0] ?? "";
  params.forEach((param, i) => {
    if (typeof param !== "string" && typeof param !== "number")
      throw invalidPath(`a path parameter must be a string or number, got ${typeof param}`);
    const value = String(param);
    if (value === "" || value === "." || value === "..")
      throw invalidPath(`path parameter ${JSON.stringify(value)} is not allowed`);
    out += encodeURIComponent(value) + (strings[i + 1] ?? "");
  });
  const pathname = out.split(/[?#]/)[0] ?? "";
  for (const segment of pathname.split("/").slice(1)) {
    let decoded = segment;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      /* keep as is */
    }
    if (decoded === "." || decoded === "..") throw invalidPath(`"${pathname}" contains a "${decoded}" segment`);
  }
  return out;
}

function invalidPath(why: string): OrkestrError {
  return new OrkestrError({ status: 400, code: "invalid_path", detail: `Refused to build the request path: ${why}.` });
}

/** Query string from a plain object: null/undefined skipped, arrays repeated. */
export function buildQuery(query: Query | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value) params.append(key, String(v));
    else params.append(key, String(value));
  }
  const s = params.toString();
  return s ? `?${s}` : "";
}
