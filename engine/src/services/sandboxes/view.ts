import { iso, isoOrNull } from "../../lib/time.js";
import type { VolumeRef } from "../volumes.js";
import type { SandboxRow } from "./repository.js";

export interface SandboxView {
  id: string;
  status: SandboxRow["status"];
  template: string;
  size: string;
  cpu: number;
  memory_mb: number;
  network: string;
  allow_domains: string[] | null;
  region: string;
  metadata: Record<string, string>;
  env_keys: string[];
  timeout_seconds: number;
  on_timeout: string;
  auto_resume: boolean;
  volume: VolumeRef | null;
  snapshot: string | null;
  preview_auth: boolean;
  preview_auth_token?: string | null;
  preview_host_base: string | null;
  created_at: string;
  started_at: string | null;
  expires_at: string | null;
  paused_at: string | null;
  terminated_at: string | null;
  status_reason: string | null;
}

/**
 * A sandbox as the API shows it: its row, plus what other services know (its volume, the preview
 * host base). The preview token is shown once, in the answer to the create that made it.
 */
export function sandboxView(
  row: SandboxRow,
  context: { volume: VolumeRef | null; previewHostBase: string | null; preview_auth_token?: string },
): SandboxView {
  const v: SandboxView = {
    id: row.id,
    status: row.status,
    template: row.template,
    size: row.size,
    cpu: row.cpu,
    memory_mb: row.memory_mb,
    network: row.network,
    allow_domains: row.allow_domains ? (JSON.parse(row.allow_domains) as string[]) : null,
    region: row.region,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    env_keys: JSON.parse(row.env_keys) as string[],
    timeout_seconds: row.timeout_seconds,
    on_timeout: row.on_timeout,
    auto_resume: !!row.auto_resume,
    volume: context.volume,
    snapshot: row.snapshot_id ?? null,
    preview_auth: !!row.preview_auth,
    preview_host_base: context.previewHostBase,
    created_at: iso(row.created_at),
    started_at: isoOrNull(row.started_at),
    expires_at: isoOrNull(row.expires_at),
    paused_at: isoOrNull(row.paused_at),
    terminated_at: isoOrNull(row.terminated_at),
    status_reason: row.status_reason,
  };
  if ("preview_auth_token" in context) v.preview_auth_token = context.preview_auth_token ?? null;
  return v;
}
