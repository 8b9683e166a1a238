import type { NetworkHandle } from "../../runtime/network.js";
import type { SandboxProcess } from "../../runtime/sandbox-proc.js";
import type { SandboxMeter } from "../metrics.js";

/** What the engine keeps in memory for a sandbox whose processes exist. */
export interface Live {
  proc: SandboxProcess;
  meter: SandboxMeter;
  network: NetworkHandle;
  timer: NodeJS.Timeout | null;
  env: Record<string, string>;
  /** Serializes lifecycle transitions of this sandbox. */
  lock: Promise<unknown>;
}

/**
 * The sandboxes whose processes exist on this machine (running or paused), by id. Its own object,
 * built before the services, because three of them read it: the lifecycle owns the entries, host
 * admission counts their threads, the usage ledger adds what their meters counted since the last persist.
 */
export class LiveSandboxes extends Map<string, Live> {
  process(id: string): SandboxProcess | undefined {
    return this.get(id)?.proc;
  }

  /** Every live sandbox's meter (the usage ledger's LiveMeters). */
  meters(): [string, SandboxMeter][] {
    return [...this].map(([id, l]) => [id, l.meter]);
  }

  /** Uids of live sandboxes (the uid pool never hands one out twice). */
  uids(): number[] {
    return [...this.values()].map((l) => l.proc.spec.uid);
  }
}
