// The pieces every "Show code" snippet is built from: the create form's and each resource page's
// (snapshots, volumes, templates, webhooks). Snippets never carry a token: each reads
// ORKESTR_API_KEY from the environment, as the SDKs do.

export type CodeLanguage = "python" | "javascript" | "curl";

/** One action as code, in each language the console shows. */
export type Snippets = Record<CodeLanguage, string>;

export const CODE_LANGUAGES: readonly { id: CodeLanguage; label: string }[] = [
  { id: "python", label: "Python" },
  { id: "javascript", label: "JavaScript" },
  { id: "curl", label: "curl" },
];

export const HOSTED_API = "https://api.orkestr.eu";

/** JSON string literals are valid in Python and JavaScript alike. */
export const str = (s: string) => JSON.stringify(s);

/** snake_case → camelCase, as the JS SDK names options. */
export function camel(key: string): string {
  return key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

export function pyValue(v: unknown): string {
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number") return String(v);
  if (typeof v === "string") return str(v);
  if (Array.isArray(v)) return `[${v.map(pyValue).join(", ")}]`;
  if (typeof v === "object" && v !== null)
    return `{${Object.entries(v)
      .map(([k, x]) => `${str(k)}: ${pyValue(x)}`)
      .join(", ")}}`;
  return "None";
}

export function jsValue(v: unknown): string {
  if (typeof v === "boolean" || typeof v === "number") return String(v);
  if (typeof v === "string") return str(v);
  if (Array.isArray(v)) return `[${v.map(jsValue).join(", ")}]`;
  if (typeof v === "object" && v !== null)
    return `{ ${Object.entries(v)
      .map(([k, x]) => `${str(k)}: ${jsValue(x)}`)
      .join(", ")} }`;
  return "null";
}

/** Keyword arguments for a Python call, `name=value` each; undefined and null are left out. */
export function pyKwargs(args: Record<string, unknown>): string {
  return Object.entries(args)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k}=${pyValue(v)}`)
    .join(", ");
}

/** An options object for a JS call, camelCased keys; undefined and null are left out. */
export function jsOptions(args: Record<string, unknown>): string {
  const parts = Object.entries(args)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${camel(k)}: ${jsValue(v)}`);
  return parts.length ? `{ ${parts.join(", ")} }` : "{}";
}

/** A note for servers other than the hosted API, so the snippet is not silently pointed elsewhere. */
export function baseUrlNote(baseUrl: string, comment: string): string {
  return baseUrl.replace(/\/+$/, "") === HOSTED_API
    ? ""
    : `${comment} This console talks to ${baseUrl}: point the SDK's base URL there.\n`;
}

/** The API's URL for a `/v1/...` path on this base URL (with or without its own `/v1`). */
export function apiUrl(baseUrl: string, v1Path: `/v1/${string}`): string {
  return `${baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "")}${v1Path}`;
}

/**
 * One request as curl. A JSON body goes single-quoted, with any ' closed, escaped and reopened, so
 * nothing in it is expanded by the shell. `idempotent` adds an Idempotency-Key, as the SDKs send
 * on creates.
 */
export function curlRequest({
  method,
  url,
  body,
  idempotent = false,
}: {
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  url: string;
  body?: unknown;
  idempotent?: boolean;
}): string {
  const lines = [
    `curl${method === "GET" ? "" : ` -X ${method}`} ${str(url)}`,
    '-H "Authorization: Bearer $ORKESTR_API_KEY"',
  ];
  if (body !== undefined) lines.push('-H "Content-Type: application/json"');
  if (idempotent) lines.push('-H "Idempotency-Key: $(uuidgen)"');
  if (body !== undefined) lines.push(`--data '${JSON.stringify(body, null, 2).replace(/'/g, "'\\''")}'`);
  return `${lines.join(" \\\n  ")}\n`;
}
