import { path } from "./orkestr/path";

// The console's own page links, built with the same `path` tag as API paths: an id is encoded and
// can never add or climb out of a segment.

/** The sandbox's detail page, or one of its tabs (`files`, `terminal`, `previews`…). */
export function sandboxHref(id: string, tab?: string): string {
  return tab ? path`/sandboxes/${id}/${tab}` : path`/sandboxes/${id}`;
}
