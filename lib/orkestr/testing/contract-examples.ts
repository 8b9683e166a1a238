/**
 * Wire examples recorded from the contract (`../shared/orkestr-api.md`, sections named per
 * constant), plus a few realistic deviations a tolerant client must survive.
 */

/** The sandbox object, comments removed. */
export const SANDBOX = {
  id: "sbx_01J9Z3K6Q8M2WZ7XH4D5F6G7H8",
  status: "running",
  template: "python-3.12",
  size: "small",
  cpu: 1.0,
  memory_mb: 2048,
  network: "restricted",
  allow_domains: ["api.openai.com"],
  region: "fsn1",
  metadata: { agent_run: "r_42" },
  env_keys: ["OPENAI_API_KEY"],
  timeout_seconds: 600,
  on_timeout: "kill",
  auto_resume: false,
  volume: null,
  snapshot: null,
  preview_auth: false,
  preview_auth_token: null,
  created_at: "2025-06-01T12:00:00Z",
  started_at: "2025-06-01T12:00:00.300Z",
  expires_at: "2025-06-01T12:10:00Z",
  paused_at: null,
  terminated_at: null,
} as const;

/** POST /v1/sandboxes/{id}/exec, 200. */
export const EXEC_RESULT = {
  stdout: "499999500000\n",
  stderr: "",
  exit_code: 0,
  duration_ms: 121,
  timed_out: false,
  truncated: false,
};

/** POST /v1/sandboxes/{id}/exec/stream, as SSE. */
export const EXEC_STREAM_SSE = [
  'data: {"stream":"stdout","data":"step 1\\n"}\n\n',
  'data: {"stream":"stderr","data":"warning: ...\\n"}\n\n',
  ": keepalive\n\n",
  'data: {"is_final":true,"exit_code":0,"duration_ms":5234,"timed_out":false}\n\n',
];

/** POST /v1/sandboxes/{id}/exec/stream: an error after the stream started. */
export const EXEC_STREAM_ERROR_FRAME = '{"is_final":true,"error":"agent went away","code":"sandbox_agent_unreachable"}';

/** Another provider's exec stream (Superserve / Declaw style SSE). */
export const EXEC_STREAM_FOREIGN = [
  'data: {"stdout":"hi\\n"}\n\n',
  ": keepalive\n\n",
  'data: {"stderr":"oops\\n"}\n\n',
  'data: {"exit_code":3,"finished":true}\n\n',
];

/** GET /v1/sandboxes/{id}/files?path= on a file. */
export const FILE_READ = {
  path: "/workspace/x.py",
  type: "file",
  size: 28,
  content: "cHJpbnQoJ2hlbGxvIGZyb20gb3JrZXN0cicp",
  encoding: "base64",
  modified_at: "2025-06-01T12:00:00Z",
};
export const DIR_READ = {
  path: "/workspace",
  type: "directory",
  entries: [{ name: "x.py", path: "/workspace/x.py", is_dir: false, size: 28, modified_at: "2025-06-01T12:00:00Z" }],
};
export const PRESIGN_UPLOAD = {
  url: "https://api.orkestr.eu/v1/sandboxes/sbx_1/files/raw?path=%2Fworkspace%2Fbig.tar&exp=1717243500&sig=abcd",
  method: "PUT",
  headers: { "Content-Type": "application/octet-stream" },
  expires_at: "2025-06-01T12:05:00Z",
};

/** GET /v1/sandboxes/{id}/metrics. */
export const METRICS = {
  sandbox_id: "sbx_1",
  sandbox_status: "running",
  sample_interval_seconds: 5,
  cpu: { usage_percent: 37.5, usage_cores: 0.375, cores: 1 },
  memory: { usage_bytes: 412090368, usage_percent: 19.2, limit_bytes: 2147483648 },
  lifetime: { cpu_seconds: 83.2, gb_seconds: 1210.0 },
  samples: [{ t: "2025-06-01T12:00:05Z", cpu_percent: 35.0, mem_bytes: 409600000 }],
};
/** seed 003: a paused sandbox's metrics (null live usage, no samples). */
export const METRICS_PAUSED = {
  sandbox_id: "sbx_1",
  sandbox_status: "paused",
  sample_interval_seconds: 5,
  cpu: { usage_percent: null, usage_cores: null, cores: 1 },
  memory: { usage_bytes: null, usage_percent: null, limit_bytes: 1073741824 },
  lifetime: { cpu_seconds: 1.5, gb_seconds: 2.25 },
  samples: [],
};

/** POST /v1/sandboxes/{id}/timeout (set_timeout). */
export const SET_TIMEOUT = { id: "sbx_1", timeout_seconds: 900, expires_at: "2025-06-01T12:15:00Z" };

/** POST /v1/sandboxes/{id}/snapshots, 201. */
export const SNAPSHOT = {
  id: "snap_1",
  name: "after-setup",
  sandbox_id: "sbx_1",
  template: "python-3.12",
  region: "fsn1",
  size_mb: 812,
  status: "ready",
  created_at: "2025-06-01T12:00:00Z",
};

/** POST /v1/volumes, 201. */
export const VOLUME = {
  id: "vol_1",
  name: "datasets",
  size_gb: 10,
  size_mb: 0,
  status: "available",
  region: "fsn1",
  attached_sandbox_id: null,
  max_lifetime_hours: 720,
  expires_at: "2025-07-01T12:00:00Z",
  created_at: "2025-06-01T12:00:00Z",
};

/** POST /v1/templates, 202. */
export const TEMPLATE = {
  id: "tmpl_1",
  name: "ml-py",
  base_image: "python-3.12",
  steps: ["pip install numpy pandas", "apt-get update && apt-get install -y jq"],
  status: "building",
  size_mb: null,
  error: null,
  created_at: "2025-06-01T12:00:00Z",
  ready_at: null,
};
export const TEMPLATE_FAILED_ERROR = {
  step_index: 1,
  step: "apt-get ...",
  exit_code: 100,
  output: "E: Unable to locate package jq",
};
export const TEMPLATE_LOGS = {
  template_id: "tmpl_1",
  status: "building",
  lines: [{ seq: 1, t: "2025-06-01T12:00:01Z", step_index: 0, stream: "stdout", data: "Collecting numpy\n" }],
  next_cursor: 2,
  done: false,
};
export const BASE_IMAGES = [
  { id: "python-3.12", description: "CPython 3.12 with pip and common libs" },
  { id: "python-3.12-bare", description: "CPython 3.12" },
  { id: "node-22", description: "Node.js 22" },
  { id: "debian-12", description: "Debian 12" },
];

/** POST /v1/webhooks, 201 (with `secret`). */
export const WEBHOOK_CREATED = {
  id: "wh_1",
  url: "https://example.com/hooks/orkestr",
  event_types: ["sandbox.created", "sandbox.terminated"],
  enabled: true,
  secret: "whsec_abc",
  created_at: "2025-06-01T12:00:00Z",
};
export const DELIVERY = {
  id: "dlv_1",
  event_id: "evt_1",
  event_type: "sandbox.paused",
  status: "failed",
  attempts: 3,
  response_status: 500,
  duration_ms: 812,
  created_at: "2025-06-01T12:00:00Z",
  last_attempt_at: "2025-06-01T12:00:20Z",
  next_attempt_at: null,
};

/** GET /v1/sandboxes/limits. */
export const LIMITS = {
  plan: "free",
  allowed_sizes: ["small"],
  max_concurrent: 2,
  trial_credit_eur: 10.0,
  trial_credit_used_eur: 3.42,
  sizes: [
    { size: "small", cpu: 1.0, memory_mb: 2048, allowed: true },
    { size: "medium", cpu: 2.0, memory_mb: 4096, allowed: false },
    { size: "large", cpu: 4.0, memory_mb: 8192, allowed: false },
  ],
  regions: ["fsn1", "hel1", "rbx"],
  default_egress_domains: ["pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "github.com"],
  max_named_snapshots: 3,
  extra_running: 1,
  extra_max_timeout_seconds: 3600,
  extra_network_open_allowed: false,
  extra_max_volumes: 1,
  extra_max_volume_gb: 10,
  extra_max_templates: 5,
};

/** GET /v1/sandboxes/usage. */
export const USAGE = {
  currency: "EUR",
  from: "2025-06-01T00:00:00Z",
  to: "2025-06-30T23:59:59Z",
  totals: { cpu_seconds: 18234.5, gb_seconds: 40211.0, sandboxes_created: 412, cost_eur: 4.87 },
  trial_credit_eur: 10.0,
  trial_credit_used_eur: 4.87,
  series: [{ date: "2025-06-01", cpu_seconds: 612.0, gb_seconds: 1301.0, sandboxes_created: 13, cost_eur: 0.16 }],
  by_sandbox: [{ id: "sbx_1", cpu_seconds: 83.2, gb_seconds: 1210.0, cost_eur: 0.02 }],
};

/** GET /v1/sandboxes/{id}/events. */
export const EVENTS = [
  { id: "evt_1", t: "2025-06-01T12:00:00Z", type: "sandbox.created", data: {} },
  {
    id: "evt_2",
    t: "2025-06-01T12:00:01Z",
    type: "exec",
    data: { command: "python gen.py", exit_code: 0, duration_ms: 130 },
  },
  { id: "evt_3", t: "2025-06-01T12:00:02Z", type: "file.write", data: { path: "/workspace/gen.py", size: 93 } },
];

/** Error bodies (`detail`, `code`): one recorded example per code, with its HTTP status. */
export const ERRORS: {
  status: number;
  code: string;
  detail: string;
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}[] = [
  { status: 400, code: "bad_request", detail: "Malformed JSON body" },
  { status: 400, code: "invalid_path", detail: "path must be absolute" },
  {
    status: 400,
    code: "region_unavailable",
    detail: 'Region "xx1" is not available',
    extra: { regions: ["fsn1", "hel1", "rbx"] },
  },
  { status: 401, code: "unauthorized", detail: "Not authenticated", headers: { "WWW-Authenticate": "Bearer" } },
  { status: 402, code: "trial_exhausted", detail: "The free plan's one-time trial credit of EUR 5 is used up" },
  {
    status: 403,
    code: "insufficient_scope",
    detail: "This token lacks the sandboxes:write scope",
    extra: { required_scope: "sandboxes:write" },
  },
  {
    status: 403,
    code: "plan_limit",
    detail: "timeout_seconds 7200 exceeds the plan's cap",
    extra: { max_timeout_seconds: 1800 },
  },
  { status: 403, code: "size_not_allowed", detail: 'Size "large" is not available on the free plan' },
  { status: 403, code: "network_not_allowed", detail: 'network "open" is unavailable' },
  { status: 403, code: "payment_verification_required", detail: 'network "open" needs a verified payment method' },
  { status: 404, code: "sandbox_not_found", detail: "Sandbox sbx_nope not found" },
  { status: 404, code: "template_not_found", detail: 'Template "cobol-85" not found' },
  { status: 404, code: "file_not_found", detail: "/workspace/nope not found" },
  { status: 404, code: "snapshot_not_found", detail: "Snapshot snap_x not found" },
  { status: 404, code: "volume_not_found", detail: "Volume vol_x not found" },
  { status: 404, code: "webhook_not_found", detail: "Webhook wh_x not found" },
  { status: 409, code: "sandbox_not_running", detail: "Sandbox sbx_1 is terminated" },
  { status: 409, code: "sandbox_paused", detail: "Sandbox sbx_1 is paused; resume it first" },
  { status: 409, code: "sandbox_not_paused", detail: "Sandbox sbx_1 is running, not paused" },
  { status: 409, code: "template_not_ready", detail: "Template tmpl_1 is still building" },
  { status: 409, code: "volume_in_use", detail: "Volume vol_1 is attached to sbx_2" },
  { status: 409, code: "volume_region_mismatch", detail: "Volume vol_1 lives in hel1" },
  {
    status: 409,
    code: "snapshot_cap_reached",
    detail: "The free plan holds at most 1 named snapshot",
    extra: { max_named_snapshots: 1 },
  },
  { status: 410, code: "sandbox_terminated", detail: "Sandbox sbx_1 was terminated" },
  { status: 413, code: "payload_too_large", detail: "File is larger than 10 MiB; use presign-download" },
  { status: 429, code: "rate_limited", detail: "Slow down", headers: { "Retry-After": "7" } },
  { status: 429, code: "concurrency_limit", detail: "max_concurrent reached", extra: { limit: 2 } },
  { status: 501, code: "not_implemented", detail: "Snapshots are not implemented by the local engine yet" },
  { status: 502, code: "sandbox_agent_unreachable", detail: "In-VM agent is down" },
  {
    status: 503,
    code: "fleet_full",
    detail: "The fleet is momentarily full",
    extra: { retry_after_seconds: 30 },
    headers: { "Retry-After": "30" },
  },
  { status: 504, code: "upstream_timeout", detail: "The sandbox did not answer in time" },
];

/** A FastAPI validation error: 422, `detail` an array of `{loc, msg, type}`. */
export const VALIDATION_ERROR = {
  detail: [
    {
      loc: ["body", "timeout_seconds"],
      msg: "Input should be greater than or equal to 10",
      type: "greater_than_equal",
    },
    { loc: ["body", "env", "1BAD"], msg: "env names are letters, digits and _", type: "value_error" },
  ],
  code: "validation_error",
};

/** A load balancer's error page in front of the API. */
export const HTML_502 =
  "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
