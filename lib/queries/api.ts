// The browser's calls to Baton's own /api (never to orkestr): JSON in, JSON out, and one error
// type carrying the server's `{ detail, code, field, errors }` so forms can put each message on its field.

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    /** HTTP status; 0 when the server could not be reached. */
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    /** The input field the error is about, when the server named one. */
    readonly field: string | null = null,
    /** Messages by field ("name", "base_url", "token"). */
    readonly errors: Record<string, string> = {},
    /** Seconds the server asked to wait (Retry-After on 503 fleet_full or 429), when it said. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(detail);
  }

  /** The message for one form field, if the error is about it. */
  forField(field: string): string | null {
    if (this.errors[field]) return this.field === field ? this.detail : this.errors[field]!;
    return this.field === field ? this.detail : null;
  }
}

export interface ApiInit {
  method?: string;
  body?: unknown;
  signal?: AbortSignal;
  /** Extra request headers (e.g. Idempotency-Key). */
  headers?: Record<string, string>;
}

/** One page of a list: the items and the cursor of the next page (X-Next-Cursor), null at the end. */
export interface ApiPage<T> {
  items: T[];
  nextCursor: string | null;
}

export async function apiFetch<T>(url: string, init: ApiInit = {}): Promise<T> {
  return (await apiRequest<T>(url, init)).data;
}

/** A list route's page: the bare JSON array plus X-Next-Cursor. */
export async function apiFetchPage<T>(url: string, init: ApiInit = {}): Promise<ApiPage<T>> {
  const { data, response } = await apiRequest<T[]>(url, init);
  return { items: Array.isArray(data) ? data : [], nextCursor: response.headers.get("x-next-cursor") || null };
}

async function apiRequest<T>(url: string, init: ApiInit): Promise<{ data: T; response: Response }> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: init.method ?? "GET",
      headers: {
        accept: "application/json",
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
        ...init.headers,
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      credentials: "same-origin",
      signal: init.signal,
    });
  } catch (err) {
    if ((err as Error).name === "AbortError") throw err;
    throw new ApiError(0, "network_error", "Could not reach the Baton server. Check your connection and try again.");
  }
  let data: unknown = null;
  if (response.status !== 204 && response.headers.get("content-type")?.includes("application/json")) {
    try {
      data = await response.json();
    } catch {
      data = null;
    }
  }
  if (response.ok) return { data: data as T, response };
  const body = (typeof data === "object" && data !== null ? data : {}) as {
    detail?: unknown;
    code?: unknown;
    field?: unknown;
    errors?: unknown;
  };
  const detail =
    typeof body.detail === "string" && body.detail.trim()
      ? body.detail.trim()
      : `The server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""}.`;
  const errors: Record<string, string> = {};
  if (typeof body.errors === "object" && body.errors !== null) {
    for (const [k, v] of Object.entries(body.errors)) if (typeof v === "string") errors[k] = v;
  }
  const retryAfter = Number(response.headers.get("retry-after"));
  throw new ApiError(
    response.status,
    typeof body.code === "string" ? body.code : "error",
    detail,
    typeof body.field === "string" ? body.field : null,
    errors,
    Number.isFinite(retryAfter) && retryAfter >= 0 && response.headers.has("retry-after") ? retryAfter : null,
  );
}
