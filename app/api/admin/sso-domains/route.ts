import { getMigratedDb } from "../../../../lib/server/db/index";
import { approveSsoDomain, findSsoDomain, instanceOwnerId, listSsoDomains } from "../../../../lib/server/db/sso";
import { getTeam } from "../../../../lib/server/db/teams";
import { z } from "zod";
import { AppError, validationError } from "../../../../lib/server/errors";
import { route } from "../../../../lib/server/route";
import { ApproveDomainBody } from "../../../../lib/validations/sso";

export const runtime = "nodejs";

// The instance owner's SSO domain approvals. A team's claim on an email domain is enforced (and may
// link existing accounts) only once the instance owner (the first owner, who set Baton up) approved
// it: a team must not be able to claim someone else's domain by typing it.

async function requireInstanceOwner(userId: string): Promise<void> {
  if ((await instanceOwnerId(await getMigratedDb())) !== userId)
    throw new AppError(
      "forbidden",
      "Only the instance owner (the first owner, who set Baton up) can approve SSO email domains.",
    );
}

// GET /api/admin/sso-domains – every claimed domain, with its team and approval.
export const GET = route({ auth: "user" }, async ({ user }) => {
  await requireInstanceOwner(user.id);
  const db = await getMigratedDb();
  const domains = await listSsoDomains(db);
  const teams = new Map<string, { name: string; slug: string } | null>();
  for (const d of domains) if (!teams.has(d.teamId)) teams.set(d.teamId, await getTeam(db, d.teamId));
  return {
    domains: domains.map((d) => ({
      domain: d.domain,
      team: teams.get(d.teamId)
        ? { id: d.teamId, name: teams.get(d.teamId)!.name, slug: teams.get(d.teamId)!.slug }
        : null,
      approved: d.approvedAt !== null,
      approved_at: d.approvedAt,
    })),
  };
});

// POST /api/admin/sso-domains – approves one domain for the team that claimed it.
// The body is read as any JSON object and checked after the instance-owner check, so that nobody
// else learns more than "forbidden".
export const POST = route({ auth: "user", body: z.record(z.string(), z.unknown()) }, async (ctx) => {
  await requireInstanceOwner(ctx.user.id);
  const parsed = ApproveDomainBody.safeParse(ctx.body);
  if (!parsed.success) throw validationError(parsed.error, "the request body");
  const db = await getMigratedDb();
  const before = await findSsoDomain(db, parsed.data.domain);
  if (!before) throw new AppError("not_found", `No team claims ${parsed.data.domain}.`);
  const after = await approveSsoDomain(db, before.domain, ctx.user.id);
  await ctx.audit("sso.domain_approve", {
    teamId: before.teamId,
    target: before.domain,
    data: { before: { approved: before.approvedAt !== null }, after: { approved: true } },
  });
  return { domain: after!.domain, approved: after!.approvedAt !== null, approved_at: after!.approvedAt };
});
