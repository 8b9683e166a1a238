import { path } from "./orkestr/path";

// The resource pages' links (templates, volumes, webhooks, snapshots), built like lib/links.ts's.
// Apart from it on purpose: a module is bundled whole, and lib/links.ts goes into the sandbox list,
// whose first load is at its budget; only the resource pages (and a sandbox page's volume and
// template mentions) need these.

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

/** The volumes page; `volume` (an id or name) marks that volume's row. */
export function volumesHref(volume?: string): string {
  return volume ? `/volumes?volume=${encodeURIComponent(volume)}` : "/volumes";
}

/** The create form with this volume (id or name) chosen. */
export function newSandboxWithVolumeHref(volume: string): string {
  return `/sandboxes/new?volume=${encodeURIComponent(volume)}`;
}

/** A webhook's page (its settings, actions and delivery log). */
export function webhookHref(id: string): string {
  return path`/webhooks/${id}`;
}

/** A named snapshot's page (its facts, fork tree and fork form). */
export function snapshotHref(id: string): string {
  return path`/snapshots/${id}`;
}
