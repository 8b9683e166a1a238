import "server-only";
import type { OrkestrClient } from "../../orkestr/core";

// Stored sizes for the usage report (issue 22): volumes, snapshots and custom templates from the
// upstream's lists, in GB (decimal: 1 GB = 1000 MB, as orkestr bills storage). An item whose size
// the upstream does not give counts 0 GB: Baton shows what it is told and does not guess.

const LIST_CAP = 5000;

const mbToGb = (mb: number | null | undefined) =>
  typeof mb === "number" && Number.isFinite(mb) && mb > 0 ? mb / 1000 : 0;

async function sum<T>(items: AsyncIterable<T>, size: (item: T) => number): Promise<number> {
  let total = 0;
  let n = 0;
  for await (const item of items) {
    total += size(item);
    if (++n >= LIST_CAP) break;
  }
  // Three decimals (MB precision) keep float noise out of the figures.
  return Math.round(total * 1000) / 1000;
}

export async function readStorage(
  client: OrkestrClient,
): Promise<{ volumes_gb: number; snapshots_gb: number; templates_gb: number }> {
  const [volumes_gb, snapshots_gb, templates_gb] = await Promise.all([
    // A volume's provisioned size (size_gb) where given, else its recorded size in MB.
    sum(client.volumes.listAll({ limit: 100 }), (v) =>
      typeof v.size_gb === "number" && v.size_gb > 0 ? v.size_gb : mbToGb(v.size_mb),
    ),
    sum(client.snapshots.listAll({ limit: 100 }), (s) => mbToGb(s.size_mb)),
    sum(client.templates.listAll({ limit: 100 }), (t) => mbToGb(t.size_mb)),
  ]);
  return { volumes_gb, snapshots_gb, templates_gb };
}
