/**
 * POSTs JSON to one of Baton's own endpoints and turns any failure into one sentence for the form's
 * error slot: the server's `{ detail }` when it sends one, else the HTTP status, else the network error.
 */
export type PostResult = { ok: true; data: unknown } | { ok: false; status: number | null; message: string };

export async function postJson(url: string, body: unknown): Promise<PostResult> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
  } catch {
    return {
      ok: false,
      status: null,
      message: "Could not reach the Baton server. Check your connection and try again.",
    };
  }
  let data: unknown = null;
  if (response.headers.get("content-type")?.includes("application/json")) {
    try {
      data = await response.json();
    } catch {
      data = null; // an empty or malformed body is handled like a non-JSON one
    }
  }
  if (response.ok) return { ok: true, data };
  const detail =
    typeof data === "object" && data !== null && "detail" in data && typeof data.detail === "string"
      ? data.detail.trim()
      : "";
  return {
    ok: false,
    status: response.status,
    message: detail || `The server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""}.`,
  };
}

/** A same-origin path from ?next=, or the fallback (the one check, shared with the server: lib/safe-next-path.ts). */
export { nextPathFromSearch } from "../../lib/safe-next-path";
