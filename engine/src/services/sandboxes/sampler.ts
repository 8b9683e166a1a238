import type { UsageLedger } from "../usage.js";
import type { LiveSandboxes } from "./live.js";
import type { SandboxRepository } from "./repository.js";

/** The meters' readings are written to the database every this many samples (10 s at the default 1 s). */
const PERSIST_EVERY = 10;

/**
 * Reads every running sandbox's cgroup once per `sampleMs` into its meter (the /metrics ring and
 * the billing totals), and books the totals in the usage ledger every PERSIST_EVERY samples. A
 * paused sandbox is not sampled: it is frozen, and a frozen sandbox is not billed.
 */
export class UsageSampler {
  private timer: NodeJS.Timeout | null = null;
  private count = 0;

  constructor(
    private readonly live: LiveSandboxes,
    private readonly repo: SandboxRepository,
    private readonly usage: UsageLedger,
    private readonly sampleMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.sampleAll(), this.sampleMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** A last reading before the sandbox's processes go (release, pause): nothing counted is lost. */
  final(id: string): void {
    const l = this.live.get(id);
    if (!l) return;
    l.meter.sample(l.proc.cgroup, Date.now());
    this.usage.persist(id, l.meter);
  }

  private sampleAll(): void {
    const now = Date.now();
    const persist = ++this.count % PERSIST_EVERY === 0;
    for (const [id, l] of this.live) {
      const row = this.repo.rowUnscoped(id);
      if (!row || row.status !== "running") continue;
      l.meter.sample(l.proc.cgroup, now);
      if (persist) this.usage.persist(id, l.meter);
    }
  }
}
