import type { Page } from "./schemas/common";

const LIST_KEYS = ["items", "data", "sandboxes", "results"] as const;

/** A list body in any of the accepted shapes, or null. */
export function extractList(
  body: unknown,
  extraKeys: readonly string[] = [],
): { items: unknown[]; cursor: string | null } | null {
  if (Array.isArray(body)) return { items: body, cursor: null };
  if (!body || typeof body !== "object") return null;
  const o = body as Record<string, unknown>;
  for (const key of [...LIST_KEYS, ...extraKeys]) {
    const v = o[key];
    if (Array.isArray(v)) {
      return {
        items: v,
        cursor: cursorOf(o.next_cursor) ?? cursorOf(o.nextCursor) ?? cursorOf(o.next_token) ?? cursorOf(o.nextToken),
      };
    }
  }
  return null;
}

export function cursorOf(v: unknown): string | null {
  if (typeof v === "string") return v.trim() ? v.trim() : null;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  return null;
}

/**
 * Every item of every page, fetched lazily; stops if the server repeats a cursor, and after
 * `maxPages` pages when given (lists shown whole in the browser are bounded).
 */
export async function* paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  first?: string,
  maxPages = Infinity,
): AsyncGenerator<T, void, undefined> {
  const seen = new Set<string>();
  let cursor = first;
  for (let pages = 1; ; pages++) {
    const page = await fetchPage(cursor);
    yield* page.items;
    if (!page.nextCursor || seen.has(page.nextCursor) || pages >= maxPages) return;
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
}
