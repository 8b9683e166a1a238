import { getMigratedDb } from "../../../../lib/server/db/index";
import {
  deleteSsoConfig,
  DOMAIN_PATTERN,
  getSsoConfig,
  listSsoDomains,
  normalizeDomain,
  saveSsoConfig,
  setTeamDomains,
} from "../../../../lib/server/db/sso";
import { inTransaction } from "../../../../lib/server/db/util";
import { AppError } from "../../../../lib/server/errors";
import { route } from "../../../../lib/server/route";
import { issuerProblem } from "../../../../lib/server/sso/client";
import { ssoSettingsView } from "../../../../lib/server/sso/settings";
import { SsoConfigBody } from "../../../../lib/validations/sso";

export const runtime = "nodejs";

// GET /api/team/sso – the acting team's SSO settings (the client secret only as set / not set).
export const GET = route({ auth: "user", perm: "team.manage" }, async ({ req, user, team }) =>
  ssoSettingsView(await getMigratedDb(), team!.team.id, user.id, req.headers),
);

function invalid(field: string, message: string): AppError {
  return new AppError("validation_error", `${field}: ${message}`, { errors: { [field]: message } });
}

// PUT /api/team/sso – creates or replaces the team's SSO settings. Enforcing needs a successful
// test sign-in against the issuer and client saved now; new domains wait for the instance owner.
export const PUT = route({ auth: "user", perm: "team.manage", body: SsoConfigBody }, async (ctx) => {
  const { body, team, user, req } = ctx;
  const teamId = team!.team.id;
  const db = await getMigratedDb();
  const issuer = body.issuer.replace(/\/+$/, "") || body.issuer;
  const problem = issuerProblem(issuer);
  if (problem) throw invalid("issuer", problem);
  const domains = body.domains.map(normalizeDomain);
  for (const d of domains) if (!DOMAIN_PATTERN.test(d)) throw invalid("domains", `"${d}" is not a domain name`);
  const mapped = new Set<string>();
  for (const rule of body.group_role_map) {
    if (mapped.has(rule.group)) throw invalid("group_role_map", `the group "${rule.group}" is mapped twice`);
    mapped.add(rule.group);
  }
  if ((body.group_role_map.length || body.allowed_groups.length || body.group_sync) && !body.group_claim)
    throw invalid("group_claim", "is required to map groups, gate on groups or sync roles");

  const before = await getSsoConfig(db, teamId);
  const beforeDomains = await listSsoDomains(db, { teamId });
  const sameIdp = before !== null && before.issuer === issuer && before.clientId === body.client_id;
  const secretChanges = body.client_secret !== undefined;
  if (body.enforced && !(sameIdp && !secretChanges && before?.testedAt))
    throw invalid(
      "enforced",
      "run a successful Test sign-in with these issuer and client settings before enforcing SSO",
    );

  const { taken } = await inTransaction(db, async (trx) => {
    const result = await setTeamDomains(trx, teamId, domains);
    if (result.taken.length) return result;
    await saveSsoConfig(trx, teamId, {
      issuer,
      clientId: body.client_id,
      clientSecret: body.client_secret === undefined ? undefined : body.client_secret || null,
      defaultRole: body.default_role,
      groupClaim: body.group_claim || null,
      groupRoleMap: body.group_role_map,
      allowedGroups: body.allowed_groups,
      enforced: body.enforced,
      groupSync: body.group_sync,
      sessionMaxHours: body.session_max_hours,
    });
    return result;
  });
  if (taken.length)
    throw new AppError(
      "conflict",
      `${taken.join(", ")} already belongs to another team: an email domain belongs to one team only.`,
      {
        errors: { domains: `${taken.join(", ")} belongs to another team` },
      },
    );

  const after = await getSsoConfig(db, teamId);
  const summary = (c: typeof before, d: typeof beforeDomains) =>
    c && {
      issuer: c.issuer,
      client_id: c.clientId,
      client_secret: c.hasClientSecret ? "set" : "not set",
      default_role: c.defaultRole,
      group_claim: c.groupClaim,
      group_role_map: c.groupRoleMap,
      allowed_groups: c.allowedGroups,
      enforced: c.enforced,
      group_sync: c.groupSync,
      session_max_hours: c.sessionMaxHours,
      domains: d.map((x) => x.domain),
    };
  await ctx.audit("sso.config_update", {
    target: teamId,
    data: {
      before: summary(before, beforeDomains),
      after: summary(after, await listSsoDomains(db, { teamId })),
      secret_changed: secretChanges,
    },
  });
  return ssoSettingsView(db, teamId, user.id, req.headers);
});

// DELETE /api/team/sso – removes the team's SSO (settings, secret and domains). Accounts made by
// SSO stay members; they sign in again once SSO is set up again, or by password if one is set.
export const DELETE = route({ auth: "user", perm: "team.manage" }, async (ctx) => {
  const teamId = ctx.team!.team.id;
  const db = await getMigratedDb();
  const before = await getSsoConfig(db, teamId);
  if (!before) throw new AppError("not_found", "This team has no SSO set up.");
  await deleteSsoConfig(db, teamId);
  await ctx.audit("sso.config_delete", {
    target: teamId,
    data: { before: { issuer: before.issuer, client_id: before.clientId }, after: null },
  });
});
