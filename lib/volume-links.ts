// The volumes' page links. Apart from lib/links.ts on purpose: that module is bundled whole into
// /sandboxes, which is at its first-load ceiling, and only volume pieces need these.

/** The volumes page; `volume` (an id or name) marks that volume's row. */
export function volumesHref(volume?: string): string {
  return volume ? `/volumes?volume=${encodeURIComponent(volume)}` : "/volumes";
}

/** The create form with this volume (id or name) chosen. */
export function newSandboxWithVolumeHref(volume: string): string {
  return `/sandboxes/new?volume=${encodeURIComponent(volume)}`;
}
