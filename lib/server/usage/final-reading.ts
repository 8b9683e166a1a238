import "server-only";
import type { OrkestrClient } from "../../orkestr/core";
import { CREATOR_USER_KEY } from "../../sandbox-creator";
import { getMigratedDb } from "../db/index";
import { bookReading } from "./record";

// The final reading at terminate (issue 22): after Baton's DELETE /api/v1/sandboxes/{id} was
// answered by the upstream, the sandbox's lifetime counters (which a terminated sandbox keeps within
// retention) are read and booked as its last reading. In the background: the terminate is neither
// slowed nor failed by it. If it fails, the meter stays open and the reading job books the final
// reading at its next run (lib/server/usage/reader.ts).

const pending = new Set<Promise<void>>();

/** Starts the final reading of `sandboxId`, not awaited by the caller. */
export function bookFinalReading(client: OrkestrClient, teamId: string, sandboxId: string): void {
  const task = (async () => {
    const [metrics, sandbox] = await Promise.all([
      client.sandboxes.metrics(sandboxId),
      client.sandboxes.get(sandboxId).catch(() => null),
    ]);
    const user = sandbox?.metadata?.[CREATOR_USER_KEY];
    await bookReading(await getMigratedDb(), {
      teamId,
      sandboxId,
      cpuSeconds: metrics.lifetime?.cpu_seconds ?? 0,
      gibSeconds: metrics.lifetime?.gb_seconds ?? 0,
      at: Date.now(),
      userId: typeof user === "string" && user ? user : null,
      template: sandbox?.template ?? null,
      status: metrics.sandbox_status ?? sandbox?.status ?? "terminated",
      final: true,
    });
  })().catch((err: unknown) => {
    console.error(`[baton] usage: the final reading of ${sandboxId} failed (the reading job will book it)`, err);
  });
  pending.add(task);
  void task.finally(() => pending.delete(task));
}

/** Waits for the final readings in flight (tests, shutdown). */
export async function settleFinalReadings(): Promise<void> {
  await Promise.all([...pending]);
}
