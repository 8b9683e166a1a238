import "server-only";
import type { SsoSettings } from "../../validations/sso";
import type { Db } from "../db/index";
import { getSsoConfig, instanceOwnerId, listSsoDomains } from "../db/sso";
import { redirectUri } from "./flow";

/** A team's SSO settings as the page shows them: the secret only as set / not set. */
export async function ssoSettingsView(db: Db, teamId: string, userId: string, headers: Headers): Promise<SsoSettings> {
  const [config, domains, owner] = await Promise.all([
    getSsoConfig(db, teamId),
    listSsoDomains(db, { teamId }),
    instanceOwnerId(db),
  ]);
  return {
    config: config && {
      issuer: config.issuer,
      client_id: config.clientId,
      client_secret_set: config.hasClientSecret,
      default_role: config.defaultRole,
      group_claim: config.groupClaim,
      group_role_map: config.groupRoleMap,
      allowed_groups: config.allowedGroups,
      enforced: config.enforced,
      group_sync: config.groupSync,
      session_max_hours: config.sessionMaxHours,
      tested_at: config.testedAt,
      last_test: config.lastTest,
    },
    domains: domains.map((d) => ({ domain: d.domain, approved: d.approvedAt !== null, approved_at: d.approvedAt })),
    redirect_uri: redirectUri(headers),
    is_instance_owner: owner === userId,
  };
}
