import { path } from "./orkestr/path";

// The console's own page links, built with the same `path` tag as API paths: an id is encoded and
// can never add or climb out of a segment.

/** The sandbox's detail page, or one of its tabs (`files`, `terminal`, `previews`…). */
export function sandboxHref(id: string, tab?: string): string {
  return tab ? path`/sandboxes/${id}/${tab}` : path`/sandboxes/${id}`;
}

/** A custom template's page: its build log, steps and the sandboxes using it. */
export function templateHref(id: string): string {
  return path`/templates/${id}`;
}

/** The template create form; `from` prefills it from an existing template (templates are immutable: "Edit" makes a new one). */
export function newTemplateHref(from?: string): string {
  return from ? `/templates/new?from=${encodeURIComponent(from)}` : "/templates/new";
}

/** The sandbox create form with this template chosen. */
export function newSandboxFromTemplateHref(template: string): string {
  return `/sandboxes/new?template=${encodeURIComponent(template)}`;
}

/** A webhook's page (its settings, actions and delivery log). */
export function webhookHref(id: string): string {
  return path`/webhooks/${id}`;
}
