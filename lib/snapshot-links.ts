import { path } from "./orkestr/path";

// Apart from lib/links.ts, which the sandbox list and the command palette load: this link is only
// needed on the snapshot pages and a sandbox's page, and /sandboxes has no bytes to spare.

/** A named snapshot's page (its facts, fork tree and fork form). */
export function snapshotHref(id: string): string {
  return path`/snapshots/${id}`;
}
