import "server-only";
import type { ColumnType } from "kysely";

// The console's database, as Kysely sees it. One schema for SQLite and Postgres, so the column types
// are the portable subset (see migrations/0001_init.ts):
// - ids are text, generated in app code (lib/server/ids.ts); sessions.id is sha256(token) in hex;
// - timestamps are integer epoch milliseconds (bigint in Postgres, parsed back to number);
// - booleans are integers 0/1; JSON is stored as text;
// - emails are matched through a lowercased `email_normalized` column with a unique index.
// Rows read back are validated with zod in the repositories before they reach the UI.

export const ROLES = ["owner", "admin", "member", "viewer"] as const;
export type Role = (typeof ROLES)[number];

/** Epoch milliseconds. */
export type EpochMs = number;
/** 0 or 1. */
export type IntBool = 0 | 1;

export interface UsersTable {
  id: string;
  email: string;
  email_normalized: string;
  name: string;
  /** Null for accounts that sign in only through an external provider. */
  password_hash: string | null;
  created_at: EpochMs;
  updated_at: EpochMs;
  disabled_at: EpochMs | null;
}

export interface SessionsTable {
  /** sha256(session token), hex. The token itself is never stored. */
  id: string;
  user_id: string;
  created_at: EpochMs;
  expires_at: EpochMs;
  last_seen_at: EpochMs;
  revoked_at: EpochMs | null;
  ip: string | null;
  user_agent: string | null;
}

export interface TeamsTable {
  id: string;
  name: string;
  slug: string;
  created_at: EpochMs;
  spend_cap_eur: number | null;
  /** 1 when the owners let the team's admins set spend caps and prices (migration 0010). */
  admins_manage_billing: ColumnType<number, number | undefined, number>;
}

export interface MembershipsTable {
  team_id: string;
  user_id: string;
  /** One of ROLES; not a DB CHECK so that adding a role needs no table rebuild on SQLite. Validated on read. */
  role: string;
  created_at: EpochMs;
  /** Suspended in this team (migration 0006_members): the membership grants nothing until enabled. */
  disabled_at: ColumnType<EpochMs | null, EpochMs | null | undefined, EpochMs | null>;
}

export interface InvitationsTable {
  id: string;
  team_id: string;
  email: string;
  email_normalized: string;
  role: string;
  /** sha256(invitation token), hex. */
  token_hash: string;
  invited_by: string | null;
  created_at: EpochMs;
  expires_at: EpochMs;
  accepted_at: EpochMs | null;
  /** Withdrawn, or replaced by a newer invitation to the same address (0006_members). */
  revoked_at: ColumnType<EpochMs | null, EpochMs | null | undefined, EpochMs | null>;
  /** When the current link was made (0006_members). */
  last_sent_at: ColumnType<EpochMs | null, EpochMs | null | undefined, EpochMs | null>;
}

export interface OrkestrConnectionsTable {
  id: string;
  user_id: string;
  team_id: string | null;
  name: string;
  base_url: string;
  /** encrypt(token, { aad: connectionTokenAad(id) }) */
  token_ciphertext: string;
  /** e.g. "ork_…abcd" */
  token_hint: string;
  is_active: number;
  created_at: EpochMs;
  updated_at: EpochMs;
  last_checked_at: EpochMs | null;
  last_error: string | null;
  /** The local engine's id of the token this connection holds (to revoke it); null for other servers. */
  engine_token_id: string | null;
  /** The first successful upstream call through this connection (audited once); null before. */
  first_used_at: EpochMs | null;
}

export interface AuditEventsTable {
  id: string;
  team_id: string | null;
  user_id: string | null;
  /** The actor's email when the row was written (the row outlives the user). */
  actor_email: string | null;
  /** Which credential acted: "session", "token:<name>", "password", "sso"… */
  credential: string | null;
  action: string;
  /** Free text, older rows; newer ones also set target_type and target_id. */
  target: string | null;
  target_type: string | null;
  target_id: string | null;
  /** "ok", or the refusal's error code. */
  result: string;
  /** JSON text, or null ({before, after} for changes). */
  data: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  created_at: EpochMs;
}

/** A team's audit settings: retention and the SIEM stream (lib/server/audit/settings.ts). */
export interface AuditSettingsTable {
  team_id: string;
  retention_days: number;
  siem_url: string | null;
  /** encrypt(secret, { aad: siemSecretAad(team_id) }) */
  siem_secret_ciphertext: string | null;
  siem_enabled: number;
  updated_at: EpochMs;
}

/** Audit rows waiting to be POSTed to their team's SIEM stream (lib/server/audit/stream.ts). */
export interface AuditOutboxTable {
  event_id: string;
  team_id: string;
  attempts: number;
  next_attempt_at: EpochMs;
  /** A sender holds the row until then (several instances send each row once). */
  claimed_until: EpochMs | null;
  last_error: string | null;
  gave_up_at: EpochMs | null;
  created_at: EpochMs;
}

/** SQLite only: a row here lets retention delete audit rows (the append-only trigger checks it). */
export interface AuditPurgePermitTable {
  id: number;
}

export interface LoginAttemptsTable {
  key: string;
  window_start: EpochMs;
  count: number;
}

export interface SettingsTable {
  key: string;
  value: string;
}

/** A named job's lease (lib/server/db/leases.ts): the process that may run it, until `expires_at`. */
export interface LeasesTable {
  name: string;
  holder: string;
  acquired_at: EpochMs;
  expires_at: EpochMs;
}

/** A webhook Baton made on a user's connection, delivering to its own `/api/hooks/<id>` (lib/server/hooks/). */
export interface WebhookReceiversTable {
  /** `rcv_<random>`: unguessable, it is the path of the receiving endpoint. */
  id: string;
  user_id: string;
  connection_id: string;
  /** The upstream webhook's id (`whk_…`). */
  webhook_id: string;
  url: string;
  /** encrypt(secret, { aad: receiverSecretAad(id) }) */
  secret_ciphertext: string;
  created_at: EpochMs;
}

/** One verified delivery a receiver recorded. */
export interface ReceivedEventsTable {
  id: string;
  receiver_id: string;
  /** The signed body's `id` (`evt_…`). */
  event_id: string;
  /** `X-Orkestr-Delivery` (`dlv_…`). */
  delivery_id: string;
  type: string;
  sandbox_id: string | null;
  sandbox_status: string | null;
  /** The signed body, as received. */
  body: string;
  event_created_at: EpochMs;
  received_at: EpochMs;
}

/** A user's TOTP second factor (migrations/0007_account_security.ts). */
export interface UserTotpTable {
  user_id: string;
  /** encrypt(base32 secret, { aad: totpSecretAad(user_id) }) */
  secret_ciphertext: string;
  created_at: EpochMs;
  /** Null while enrolment waits for the first code. */
  confirmed_at: EpochMs | null;
  /** The newest time step a code was accepted for (replay refused). */
  last_step: number | null;
}

/** One recovery code of a user's second factor: only its sha256 is kept. */
export interface UserRecoveryCodesTable {
  id: string;
  user_id: string;
  code_hash: string;
  created_at: EpochMs;
  used_at: EpochMs | null;
}

/** A sign-in whose password was right and whose second factor is still to come. */
export interface PendingLoginsTable {
  /** sha256(the pending cookie's token), hex. */
  id: string;
  user_id: string;
  /** The sign-in limiter key the password step counted against (cleared on success only). */
  rate_key: string;
  /** The device cookie to set once signed in (lib/server/device-trust.ts). */
  device_token: string | null;
  attempts: number;
  ip: string | null;
  user_agent: string | null;
  created_at: EpochMs;
  expires_at: EpochMs;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  teams: TeamsTable;
  memberships: MembershipsTable;
  invitations: InvitationsTable;
  orkestr_connections: OrkestrConnectionsTable;
  audit_events: AuditEventsTable;
  audit_settings: AuditSettingsTable;
  audit_outbox: AuditOutboxTable;
  audit_purge_permit: AuditPurgePermitTable;
  login_attempts: LoginAttemptsTable;
  settings: SettingsTable;
  leases: LeasesTable;
  webhook_receivers: WebhookReceiversTable;
  received_events: ReceivedEventsTable;
  user_totp: UserTotpTable;
  user_recovery_codes: UserRecoveryCodesTable;
  pending_logins: PendingLoginsTable;
  sso_configs: SsoConfigsTable;
  sso_domains: SsoDomainsTable;
  sso_identities: SsoIdentitiesTable;
  sso_transactions: SsoTransactionsTable;
  usage_meters: UsageMetersTable;
  usage_daily: UsageDailyTable;
  team_usage_settings: TeamUsageSettingsTable;
  spend_caps: SpendCapsTable;
  spend_cap_state: SpendCapStateTable;
  spend_cap_alerts: SpendCapAlertsTable;
  spend_alert_settings: SpendAlertSettingsTable;
  api_tokens: ApiTokensTable;
  api_token_sandboxes: ApiTokenSandboxesTable;
  /** The alerts of API tokens' own caps (migration 0014): spend_cap_alerts' shape, cap_id = the token's id. */
  api_token_cap_alerts: SpendCapAlertsTable;
}

/** The last reading of one sandbox's lifetime counters (lib/server/usage/record.ts); whole milliseconds. */
export interface UsageMetersTable {
  team_id: string;
  sandbox_id: string;
  user_id: string | null;
  template: string | null;
  status: string | null;
  cpu_ms: number;
  gib_ms: number;
  read_at: EpochMs;
  prev_cpu_ms: number | null;
  prev_gib_ms: number | null;
  prev_read_at: EpochMs | null;
  final_at: EpochMs | null;
}

/** Usage booked per (team, UTC day, sandbox): CPU milliseconds and GiB-milliseconds. */
export interface UsageDailyTable {
  team_id: string;
  date: string;
  sandbox_id: string;
  user_id: string | null;
  template: string | null;
  cpu_ms: number;
  gib_ms: number;
}

/** A team's rate card (µ€) and when its counters were last read. */
export interface TeamUsageSettingsTable {
  team_id: string;
  vcpu_hour_micro: ColumnType<number, number | undefined, number>;
  gib_hour_micro: ColumnType<number, number | undefined, number>;
  storage_gb_month_micro: ColumnType<number, number | undefined, number>;
  free_storage_gb: ColumnType<number, number | undefined, number>;
  updated_at: EpochMs | null;
  updated_by: string | null;
  last_reading_at: EpochMs | null;
}

/** A team's or a member's spend cap per UTC window (migration 0011; lib/usage/caps.ts). */
export interface SpendCapsTable {
  id: string;
  team_id: string;
  /** "team", or the member's user id (then also in user_id). */
  subject: string;
  user_id: string | null;
  /** "month" or "day". */
  window: string;
  /** Whole micro-euros. */
  limit_micro: number;
  /** "alert", "block" or "pause". */
  action: string;
  created_by: string | null;
  created_at: EpochMs;
  updated_by: string | null;
  updated_at: EpochMs;
}

/** What the caps job last computed for a cap, in the window `window_key` names. */
export interface SpendCapStateTable {
  cap_id: string;
  window_key: string;
  spent_micro: number;
  evaluated_at: EpochMs;
  reached_at: EpochMs | null;
  acted_at: EpochMs | null;
  /** JSON: what acting did (sandboxes paused, pauses the upstream refused). */
  last_result: string | null;
}

/** An alert sent: its row is its claim (one per cap, window and threshold). */
export interface SpendCapAlertsTable {
  cap_id: string;
  window_key: string;
  threshold: number;
  spent_micro: number;
  sent_at: EpochMs;
  /** JSON: how each channel went. */
  channels: string | null;
}

/** Where a team's spend alerts go besides the console and the audit log. */
export interface SpendAlertSettingsTable {
  team_id: string;
  webhook_url: string | null;
  /** encrypt(secret, { aad: `spend_alert_settings:<team>:webhook_secret` }). */
  webhook_secret_ciphertext: string | null;
  /** 1: email the team's owners and admins (when SMTP is configured). */
  email: ColumnType<number, number | undefined, number>;
  updated_by: string | null;
  updated_at: EpochMs;
}

/** A team's OpenID Connect identity provider (lib/server/sso/). */
export interface SsoConfigsTable {
  team_id: string;
  issuer: string;
  client_id: string;
  /** encrypt(secret, { aad: `sso_configs:<team>:client_secret` }), or null for a public client. */
  client_secret_ciphertext: string | null;
  /** "member" or "viewer": the role of a new SSO user no group maps. */
  default_role: string;
  group_claim: string | null;
  /** JSON: [{ group, role }]. */
  group_role_map: string;
  /** JSON: string[]; empty = no gate. */
  allowed_groups: string;
  enforced: IntBool;
  group_sync: IntBool;
  session_max_hours: number;
  tested_at: EpochMs | null;
  /** JSON: the last test sign-in's outcome. */
  last_test: string | null;
  created_at: EpochMs;
  updated_at: EpochMs;
}

/** An email domain a team claims; enforced only once the instance owner approved it. */
export interface SsoDomainsTable {
  domain: string;
  team_id: string;
  created_at: EpochMs;
  approved_by: string | null;
  approved_at: EpochMs | null;
}

/** Who an IdP's (issuer, subject) is in Baton. */
export interface SsoIdentitiesTable {
  id: string;
  issuer: string;
  subject: string;
  user_id: string;
  team_id: string;
  email: string;
  created_at: EpochMs;
  last_sign_in_at: EpochMs;
}

/** A sign-in in flight: id = sha256(state); single use. */
export interface SsoTransactionsTable {
  id: string;
  team_id: string;
  /** "sign_in" | "test" */
  purpose: string;
  nonce: string;
  code_verifier: string;
  user_id: string | null;
  next_path: string | null;
  created_at: EpochMs;
  expires_at: EpochMs;
  used_at: EpochMs | null;
}

/** A member's personal API token for one team (migration 0012; lib/server/api-tokens/). */
export interface ApiTokensTable {
  id: string;
  team_id: string;
  user_id: string;
  name: string;
  /** SHA-256 (hex) of the whole token: the token itself is never stored. */
  token_hash: string;
  /** "bat_…abcd", for lists. */
  hint: string;
  /** "read" or "write" (lib/server/api-tokens/scope.ts). */
  scope: string;
  created_at: EpochMs;
  /** Null: never expires (admins and owners only). */
  expires_at: EpochMs | null;
  last_used_at: EpochMs | null;
  last_used_ip: string | null;
  revoked_at: EpochMs | null;
  /** Who revoked it (a user id), or null when Baton did (the owner left, was disabled, lost the role). */
  revoked_by: string | null;
  revoked_reason: string | null;
  /** The token's own monthly spend cap in whole micro-euros; null: none (migration 0013). */
  spend_cap_micro: number | null;
  /** The most sandboxes made with the token that may exist at once; null: no limit. */
  max_concurrent: number | null;
  /** The UTC month ("YYYY-MM") for which the caps job last audited the cap as reached. */
  cap_alerted_window: string | null;
}

/** Which sandbox Baton created with which API token (migration 0013). */
export interface ApiTokenSandboxesTable {
  team_id: string;
  sandbox_id: string;
  token_id: string;
  created_at: EpochMs;
}
