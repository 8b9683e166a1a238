import type { CgroupDriver, CgroupSupport, SandboxCgroup } from "./types.js";

/** No usable cgroups: sandboxes run without limits, metering or a freezer (reported as degraded). */
export class NoCgroups implements CgroupDriver {
  support: CgroupSupport;
  constructor(reason: string) {
    this.support = { version: "none", memory: false, cpu: false, cpuacct: false, pids: false, freezer: false, reason };
  }
  adopt(): SandboxCgroup {
    return this.group();
  }
  existing(): string[] {
    return [];
  }
  async create(): Promise<SandboxCgroup> {
    return this.group();
  }
  private group(): SandboxCgroup {
    return {
      procsFiles: [],
      attach: () => undefined,
      read: () => ({ cpuNs: 0, workingSetBytes: 0, oomKills: 0, pids: 0 }),
      taskCount: () => 0,
      freeze: async () => false,
      thaw: async () => false,
      whileFrozen: async () => undefined,
      pids: () => [],
      destroy: async () => undefined,
      setCpu: () => undefined,
    };
  }
  async cleanup(): Promise<void> {}
  otherEnginesAlive(): boolean {
    return false;
  }
}
