// Bulk lifecycle actions: which selected sandboxes an action applies to, and running it over them a
// few at a time, collecting a result per sandbox (one failure never stops the others).

import { errorText } from "../../../lib/orkestr/errors";
import { allowsAction, type LifecycleAction } from "../../../lib/sandbox-status";

export type BulkAction = LifecycleAction;

/** Whether `action` makes sense for a sandbox in `status` (the others are skipped and said so). */
export const appliesTo = (action: BulkAction, status: string): boolean => allowsAction(status, action);

export const ACTION_TEXT: Record<BulkAction, { verb: string; done: string; target: string }> = {
  pause: { verb: "Pause", done: "Paused", target: "running" },
  resume: { verb: "Resume", done: "Resumed", target: "paused" },
  terminate: { verb: "Terminate", done: "Terminated", target: "not yet terminated" },
};

export interface BulkResult {
  id: string;
  ok: boolean;
  /** The upstream's `detail` when it failed. */
  detail?: string;
}

/** Runs `task` for every id with at most `limit` at once; results in the ids' order. */
export async function runBulk(
  ids: readonly string[],
  task: (id: string) => Promise<void>,
  limit = 4,
): Promise<BulkResult[]> {
  const results: BulkResult[] = new Array(ids.length);
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const i = next++;
      const id = ids[i]!;
      try {
        await task(id);
        results[i] = { id, ok: true };
      } catch (err) {
        results[i] = { id, ok: false, detail: errorText(err) };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, ids.length) }, worker));
  return results;
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
