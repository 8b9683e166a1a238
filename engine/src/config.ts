import path from "node:path";
import { z } from "zod";
import { parseWebhookAllow } from "./services/webhook-guard.js";

/** Plans the engine can impersonate; numbers live in plans.ts. */
export const PlanName = z.enum(["free", "payg", "enterprise"]);
export type PlanName = z.infer<typeof PlanName>;

const EnvSchema = z.object({
  ORKESTR_ENGINE_PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  ORKESTR_ENGINE_HOST: z.string().default("127.0.0.1"),
  /**
   * Host headers the API answers besides 127.0.0.1, localhost and [::1] with the engine's port
   * (comma separated; "name" admits any port, "name:port" only that one). DNS rebinding defence.
   */
  ORKESTR_ENGINE_ALLOWED_HOSTS: z.string().default(""),
  BATON_DATA_DIR: z.string().default("./data"),
  ORKESTR_ENGINE_PLAN: PlanName.default("payg"),
  /** Comma-separated "host=ip" pairs the egress proxy resolves before DNS (tests point names at their fake internet). */
  ORKESTR_ENGINE_EGRESS_HOSTS: z.string().default(""),
  /** Metrics sampling period. */
  ORKESTR_ENGINE_SAMPLE_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
  /** Keepalive comment period on SSE and NDJSON streams (POST /v1/sandboxes/:id/exec/stream, events and logs with follow: 15 s). */
  ORKESTR_ENGINE_KEEPALIVE_MS: z.coerce.number().int().min(50).max(300_000).default(15_000),
  /**
   * Streams (events and build logs followed live, exec streams, terminal WebSockets) one token, and
   * one account with all its tokens, may hold open at once; one more is 429 too_many_streams
   * (services/stream-leases.ts).
   */
  ORKESTR_ENGINE_STREAMS_PER_TOKEN: z.coerce.number().int().min(1).max(100_000).default(64),
  ORKESTR_ENGINE_STREAMS_PER_ACCOUNT: z.coerce.number().int().min(1).max(100_000).default(256),
  /**
   * How often the tokens of open streams are read again (ms): a token revoked by another process
   * (the engine:token CLI) or expired ends its streams within this long. A revocation through this
   * engine's admin API ends them at once.
   */
  ORKESTR_ENGINE_STREAM_AUTH_CHECK_MS: z.coerce.number().int().min(50).max(5_000).default(2_000),
  /**
   * Warm pool (services/warm-pool.ts): how many booted sandboxes to keep ready per pooled template,
   * so a create that matches them (that template, size small, network "off", no snapshot or volume)
   * skips the boot. 0 turns the pool off. Pool members count in the machine's capacity.
   */
  ORKESTR_ENGINE_POOL_SIZE: z.coerce.number().int().min(0).max(32).default(2),
  /** The built-in templates the warm pool holds (comma separated; aliases allowed). */
  ORKESTR_ENGINE_POOL_TEMPLATES: z.string().default("python-3.12"),
  /** First uid of the per-sandbox host uid pool. */
  ORKESTR_ENGINE_UID_BASE: z.coerce.number().int().min(1000).default(200_000),
  ORKESTR_ENGINE_LOG: z.enum(["silent", "error", "warn", "info", "debug"]).default("info"),
  /** "1": every answer is checked against its documented schema (docs/openapi.json); tests turn it on. */
  ORKESTR_ENGINE_CHECK_RESPONSES: z.enum(["0", "1"]).default("0"),
  /**
   * Mechanisms to treat as refused by the kernel (comma list of userns, cgroups, slirp4netns,
   * seccomp), so the degraded paths can be exercised on a machine that allows everything.
   */
  ORKESTR_ENGINE_DISABLE: z.string().default(""),
  /** Overrides the plan's one-time trial credit (EUR), e.g. to exercise trial_exhausted. */
  ORKESTR_ENGINE_TRIAL_CREDIT_EUR: z.coerce.number().min(0).optional(),
  /** Extra CIDR to blackhole besides the sandbox range (comma separated). */
  ORKESTR_ENGINE_BLACKHOLE: z.string().default(""),
  /** Custom template builds: longest one step may run (s). */
  ORKESTR_ENGINE_TEMPLATE_STEP_TIMEOUT_S: z.coerce.number().int().min(1).max(86_400).default(1800),
  /**
   * Network of template build sandboxes: "restricted" (default: HTTPS to the default egress list
   * through the allow-listing proxy, so pip/npm installs work) or "off".
   */
  ORKESTR_ENGINE_TEMPLATE_BUILD_NETWORK: z.enum(["off", "restricted"]).default("restricted"),
  /** Custom template builds: longest a whole build may run (s), from its first step to its last. */
  ORKESTR_ENGINE_TEMPLATE_BUILD_TIMEOUT_S: z.coerce.number().int().min(1).max(86_400).default(3600),
  /**
   * How many template builds run at once (each in its own slot and host uid, at most
   * runtime/host.ts BUILD_UIDS), and how many of them one account may hold: another account's
   * build never waits behind one account's long builds while a slot is free for it.
   */
  ORKESTR_ENGINE_TEMPLATE_BUILDS: z.coerce.number().int().min(1).max(8).default(2),
  ORKESTR_ENGINE_TEMPLATE_BUILDS_PER_ACCOUNT: z.coerce.number().int().min(1).max(8).default(1),
  /** Largest a template layer may grow on disk (MB); a build past it fails. */
  ORKESTR_ENGINE_TEMPLATE_MAX_MB: z.coerce.number().int().min(1).max(1_000_000).default(10_240),
  /**
   * Test knob: how many MiB one "GB" of a volume's size_gb is (default 1024). Lets a test fill a
   * 1 GB volume past its size without writing a gigabyte; never set it in real use.
   */
  ORKESTR_ENGINE_VOLUME_UNIT_MB: z.coerce.number().int().min(8).max(1024).default(1024),
  /** How often expired volumes are looked for and deleted (ms). */
  ORKESTR_ENGINE_VOLUME_SWEEP_MS: z.coerce.number().int().min(50).max(3_600_000).default(60_000),
  /** Test knob: how long one hour of a volume's max_lifetime lasts (ms; default a real hour). */
  ORKESTR_ENGINE_VOLUME_HOUR_MS: z.coerce.number().int().min(10).max(3_600_000).default(3_600_000),
  /** Gap between webhook delivery attempts (seed 003: 10 s); tests shorten it. */
  ORKESTR_ENGINE_WEBHOOK_RETRY_MS: z.coerce.number().int().min(10).max(3_600_000).default(10_000),
  /**
   * Comma-separated receiver prefixes (e.g. "http://127.0.0.1:3000/api/hooks/") webhooks may be
   * delivered below although they are internal (loopback, private, link-local…) or plain http; a
   * bare origin allows that whole origin. Every other receiver must be https:// on a public address,
   * checked when the webhook is saved and again at connect time (services/webhook-guard.ts). Empty
   * by default: no internal receiver at all.
   */
  ORKESTR_ENGINE_WEBHOOK_ALLOW: z.string().default(""),
  /**
   * What the machine keeps for itself when the engine admits sandboxes, volumes and templates
   * (services/admission.ts): RAM (MiB; default max(1024, 10 % of MemTotal)), pids (default
   * max(2048, 10 % of min(pid_max, threads-max))), disk on the data filesystem (MiB; default
   * max(2048, 2 % of its size)).
   */
  ORKESTR_ENGINE_MEMORY_RESERVE_MB: z.coerce.number().int().min(0).optional(),
  ORKESTR_ENGINE_PIDS_RESERVE: z.coerce.number().int().min(0).optional(),
  ORKESTR_ENGINE_DISK_RESERVE_MB: z.coerce.number().int().min(0).optional(),
  /**
   * Test knobs only: pretend the machine has this much RAM (MemTotal, MiB) or this much free space
   * on the data filesystem (MiB), so a test can reach the host clamp without filling the machine.
   * Never set them in real use: they make the engine promise what the machine may not have.
   */
  ORKESTR_ENGINE_HOST_MEMORY_MB: z.coerce.number().int().min(1).optional(),
  ORKESTR_ENGINE_HOST_DISK_FREE_MB: z.coerce.number().int().min(0).optional(),
});

export interface EngineConfig {
  port: number;
  host: string;
  /** Extra Host header values the API answers (ORKESTR_ENGINE_ALLOWED_HOSTS, lowercased). */
  allowedHosts: string[];
  dataDir: string;
  /** Engine state root: `${BATON_DATA_DIR}/engine`. */
  root: string;
  plan: PlanName;
  egressHosts: Map<string, string>;
  sampleMs: number;
  keepaliveMs: number;
  /** Open streams per token and per account, and how often their tokens are checked (ms). */
  streams: { perToken: number; perAccount: number; authCheckMs: number };
  uidBase: number;
  /** Warm pool: members kept ready per template, and the templates (as given; resolved at boot). */
  poolSize: number;
  poolTemplates: string[];
  logLevel: "silent" | "error" | "warn" | "info" | "debug";
  /** Answers that do not match their route's response schema are a 500 (tests; see lib/serialize.ts). */
  checkResponses: boolean;
  blackhole: string[];
  trialCreditEur: number | undefined;
  disable: Set<"userns" | "cgroups" | "slirp4netns" | "seccomp" | "holder">;
  /** Custom template builds: step and build timeouts (s), build network, layer size cap (MB). */
  templateStepTimeoutS: number;
  templateBuildTimeoutS: number;
  /** Builds at once, and of one account at once. */
  templateBuilds: number;
  templateBuildsPerAccount: number;
  templateBuildNetwork: "off" | "restricted";
  templateMaxMb: number;
  /** Volume sizing unit, expiry sweep period and lifetime clock (ms; test knobs, see the env schema). */
  volumeUnitMb: number;
  volumeSweepMs: number;
  volumeHourMs: number;
  webhookRetryMs: number;
  /** Receiver prefixes (normalised, e.g. "http://127.0.0.1:3000/api/hooks/"; or whole origins) exempt from the webhook address checks. */
  webhookAllow: string[];
  /** Host clamp (services/admission.ts): configured reserves, and the test knobs that replace measurements. */
  hostCapacity: {
    memoryReserveMb?: number;
    pidsReserve?: number;
    diskReserveMb?: number;
    memoryMb?: number;
    diskFreeMb?: number;
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<EngineConfig> = {}): EngineConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`).join("\n");
    throw new Error(`invalid engine environment:\n${lines}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.BATON_DATA_DIR);
  const egressHosts = new Map<string, string>();
  for (const pair of e.ORKESTR_ENGINE_EGRESS_HOSTS.split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [host, ip] = pair.split("=");
    if (!host || !ip) throw new Error(`invalid ORKESTR_ENGINE_EGRESS_HOSTS entry "${pair}" (want host=ip)`);
    egressHosts.set(host.toLowerCase(), ip);
  }
  return {
    port: e.ORKESTR_ENGINE_PORT,
    host: e.ORKESTR_ENGINE_HOST,
    allowedHosts: e.ORKESTR_ENGINE_ALLOWED_HOSTS.split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
    dataDir,
    root: path.join(dataDir, "engine"),
    plan: e.ORKESTR_ENGINE_PLAN,
    egressHosts,
    sampleMs: e.ORKESTR_ENGINE_SAMPLE_MS,
    keepaliveMs: e.ORKESTR_ENGINE_KEEPALIVE_MS,
    streams: {
      perToken: e.ORKESTR_ENGINE_STREAMS_PER_TOKEN,
      perAccount: e.ORKESTR_ENGINE_STREAMS_PER_ACCOUNT,
      authCheckMs: e.ORKESTR_ENGINE_STREAM_AUTH_CHECK_MS,
    },
    uidBase: e.ORKESTR_ENGINE_UID_BASE,
    poolSize: e.ORKESTR_ENGINE_POOL_SIZE,
    poolTemplates: [
      ...new Set(
        e.ORKESTR_ENGINE_POOL_TEMPLATES.split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      ),
    ],
    logLevel: e.ORKESTR_ENGINE_LOG,
    checkResponses: e.ORKESTR_ENGINE_CHECK_RESPONSES === "1",
    trialCreditEur: e.ORKESTR_ENGINE_TRIAL_CREDIT_EUR,
    disable: parseDisable(e.ORKESTR_ENGINE_DISABLE),
    blackhole: e.ORKESTR_ENGINE_BLACKHOLE.split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    templateStepTimeoutS: e.ORKESTR_ENGINE_TEMPLATE_STEP_TIMEOUT_S,
    templateBuildTimeoutS: e.ORKESTR_ENGINE_TEMPLATE_BUILD_TIMEOUT_S,
    templateBuilds: e.ORKESTR_ENGINE_TEMPLATE_BUILDS,
    templateBuildsPerAccount: e.ORKESTR_ENGINE_TEMPLATE_BUILDS_PER_ACCOUNT,
    templateBuildNetwork: e.ORKESTR_ENGINE_TEMPLATE_BUILD_NETWORK,
    templateMaxMb: e.ORKESTR_ENGINE_TEMPLATE_MAX_MB,
    volumeUnitMb: e.ORKESTR_ENGINE_VOLUME_UNIT_MB,
    volumeSweepMs: e.ORKESTR_ENGINE_VOLUME_SWEEP_MS,
    volumeHourMs: e.ORKESTR_ENGINE_VOLUME_HOUR_MS,
    webhookRetryMs: e.ORKESTR_ENGINE_WEBHOOK_RETRY_MS,
    webhookAllow: parseWebhookAllow(e.ORKESTR_ENGINE_WEBHOOK_ALLOW),
    hostCapacity: {
      memoryReserveMb: e.ORKESTR_ENGINE_MEMORY_RESERVE_MB,
      pidsReserve: e.ORKESTR_ENGINE_PIDS_RESERVE,
      diskReserveMb: e.ORKESTR_ENGINE_DISK_RESERVE_MB,
      memoryMb: e.ORKESTR_ENGINE_HOST_MEMORY_MB,
      diskFreeMb: e.ORKESTR_ENGINE_HOST_DISK_FREE_MB,
    },
    ...overrides,
  };
}

const DISABLEABLE = ["userns", "cgroups", "slirp4netns", "seccomp", "holder"] as const;
function parseDisable(list: string): Set<(typeof DISABLEABLE)[number]> {
  const out = new Set<(typeof DISABLEABLE)[number]>();
  for (const item of list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!(DISABLEABLE as readonly string[]).includes(item))
      throw new Error(`ORKESTR_ENGINE_DISABLE: unknown "${item}" (known: ${DISABLEABLE.join(", ")})`);
    out.add(item as (typeof DISABLEABLE)[number]);
  }
  return out;
}
