// The audit log's vocabulary: every action Baton records, the results it records them with, and the
// target types. One list for the server's writers (recordAudit's `action` is typed by it, so a new
// action that is not here fails typecheck), the audit log page's filter suggestions, and the
// benchmark's seed rows. Client-safe: plain strings, no server imports.
//
// tests/console/audit-catalogue.test.ts keeps it honest: every action literal in app/ and
// lib/server/ is here, every entry here is written somewhere, and every mutating API route's
// refusal (lib/server/route.ts refusedAction) is named by an entry.

export const AUDIT_ACTIONS = [
  // Sign-in, sign-out, first-run setup (lib/server/sign-in.ts, lib/server/auth.ts, app/api/setup)
  "auth.sign_in",
  "auth.sign_in_failed",
  "auth.break_glass",
  "auth.sign_out",
  "auth.sign_out_everywhere",
  "auth.setup",
  "auth.setup_failed",
  // Single sign-on (lib/server/sso/flow.ts, app/api/team/sso, app/api/admin/sso-domains)
  "sso.sign_in",
  "sso.sign_in_failed",
  "sso.test",
  "sso.config_update",
  "sso.config_delete",
  "sso.domain_approve",
  // One's own account (app/api/me)
  "user.update",
  "user.password_change",
  "user.totp_enable",
  "user.totp_disable",
  "user.recovery_codes_regenerate",
  "session.revoke",
  // Teams, members, invitations (app/api/team*, lib/server/invitations.ts)
  "team.create",
  "team.update",
  "team.delete",
  "team.ownership_transfer",
  "member.role_change",
  "member.remove",
  "member.disable",
  "member.enable",
  "member.unlock",
  "member.session_revoke",
  "member.leave",
  "invitation.create",
  "invitation.revoke",
  "invitation.resend",
  "invitation.accept",
  "invitation.decline",
  // Connections to an orkestr API (app/api/connections, lib/server/audit/first-use.ts)
  "connection.create",
  "connection.local_engine",
  "connection.token_replace",
  // A refused PATCH of a connection (a token replacement or an activation: the body says which)
  "connection.update",
  "connection.activate",
  "connection.delete",
  "connection.first_use",
  // Personal API tokens (app/api/tokens, lib/server/api-tokens/): made, first used, revoked (by a
  // person, or by Baton when the owner leaves, is removed or disabled, or loses the role it needs)
  "api_token.create",
  "api_token.first_use",
  "api_token.revoke",
  // Sandboxes (app/api/v1/sandboxes); exec, presign-download and terminal close are recorded when refused
  "sandbox.create",
  "sandbox.update",
  "sandbox.pause",
  "sandbox.resume",
  "sandbox.terminate",
  "sandbox.set_timeout",
  "sandbox.preview_token_rotate",
  "sandbox.exec",
  "sandbox.file_write",
  "sandbox.file_write_batch",
  "sandbox.file_upload",
  "sandbox.file_delete",
  "sandbox.file_presign_upload",
  "sandbox.file_presign_download",
  "sandbox.terminal_open",
  "sandbox.terminal_close",
  // Snapshots, volumes, templates
  "snapshot.create",
  "snapshot.delete",
  "volume.create",
  "volume.update",
  "volume.move",
  "volume.delete",
  "template.create",
  "template.delete",
  // Webhooks out (app/api/v1/webhooks) and in (app/api/hooks/receivers)
  "webhook.create",
  "webhook.update",
  "webhook.delete",
  "webhook.enable",
  "webhook.disable",
  "webhook.rotate_secret",
  "webhook.test",
  "webhook.redeliver",
  "webhook_receiver.create",
  "webhook_receiver.delete",
  // Spend caps (app/api/usage/caps, lib/server/usage/caps-job.ts): set and removed by people; the
  // job's decisions, with the figures behind them
  "spend_cap.set",
  "spend_cap.delete",
  "spend_cap.alert",
  "spend_cap.reached",
  "spend_cap.pause",
  "spend_cap.pause_failed",
  "spend_alert.settings_update",
  // The audit log itself (app/api/audit, lib/server/audit/retention.ts)
  "audit.settings_update",
  "audit.export",
  "audit.purge",
  // Usage and cost (app/api/usage): the rate card
  "usage.rates_update",
  // A refused mutation no action above names (lib/server/route.ts refusedAction)
  "request.refused",
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

const ACTION_SET: ReadonlySet<string> = new Set(AUDIT_ACTIONS);

export function isAuditAction(value: string): value is AuditAction {
  return ACTION_SET.has(value);
}

/** "ok", or the code of the refusal: an access check's (401/403/404) or a sign-in's. */
export const AUDIT_RESULTS = [
  "ok",
  "forbidden",
  "not_found",
  "team_not_found",
  "unauthorized",
  "owner_only",
  "role_above_own",
  "invalid_credentials",
  "invalid_code",
  "account_disabled",
  "sso_required",
  "rate_limited",
  "invalid_token",
  "token_team_mismatch",
  // A spend cap blocked a request (402), or the upstream refused to pause for one
  "spend_cap_reached",
  "upstream_refused",
] as const;

/** target_type: set by the writer, or the action's resource when only a target id is given. */
export const AUDIT_TARGET_TYPES = [
  "sandbox",
  "snapshot",
  "volume",
  "template",
  "webhook",
  "webhook_receiver",
  "connection",
  "api_token",
  "team",
  "member",
  "invitation",
  "user",
  "session",
  "sso",
  "audit_log",
  "audit",
  "spend_cap",
  "spend_alert",
  "usage",
  "me",
  "admin",
  "auth",
] as const;
