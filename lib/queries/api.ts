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
  ) {
    super(detail);
  }

  /** The message for one form field, if the error is about it. */
  forField(field: string): string | null {
    if (this.errors[field]) return this.field === field ? this.detail : this.errors[field]!;
    return this.field === field ? this.detail : null;
  }
}

export async function apiFetch<T>(url: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: init.method ?? "GET",
      headers: init.body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" },
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
  if (response.ok) return data as T;
  const body = (typeof data === "object" && data !== null ? data : {}) as { detail?: unknown; code?: unknown; field?: unknown; errors?: unknown };
  const detail = typeof body.detail === "string" && body.detail.trim() ? body.detail.trim() : `The server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""}.`;
  const errors: Record<string, string> = {};
  if (typeof body.errors === "object" && body.errors !== null) {
    for (const [k, v] of Object.entries(body.errors)) if (typeof v === "string") errors[k] = v;
  }
  throw new ApiError(response.status, typeof body.code === "string" ? body.code : "error", detail, typeof body.field === "string" ? body.field : null, errors);
}
