import { getMigratedDb } from "../../../lib/server/db/index";
import { updateTeam } from "../../../lib/server/db/teams";
import { AppError } from "../../../lib/server/errors";
import { actingCan, can } from "../../../lib/server/rbac";
import { route } from "../../../lib/server/route";
import { deleteTeamAs } from "../../../lib/server/team-deletion";
import { TeamDeleteBody, TeamPatchBody, type TeamDto } from "../../../lib/validations/account";
import type { ActingTeam } from "../../../lib/server/acting-team";

export const runtime = "nodejs";

const teamOf = (team: ActingTeam | null): ActingTeam => {
  // route({ perm }) has refused a request without a team already.
  if (!team) throw new AppError("forbidden", "You are not a member of a team.");
  return team;
};

const dto = (t: ActingTeam): TeamDto => ({
  team: { id: t.team.id, name: t.team.name, slug: t.team.slug, created_at: t.team.createdAt.toISOString() },
  role: t.role,
  can_manage: can(t.role, "team.manage"),
  can_delete: can(t.role, "team.delete"),
  admins_manage_billing: t.team.adminsManageBilling,
  can_manage_billing: actingCan(t, "billing.manage"),
  can_delegate_billing: actingCan(t, "billing.delegate"),
});

// GET /api/team – the team this request acts in: name, slug, and what the user's role may do with it.
export const GET = route({ auth: "user", perm: "team.read" }, ({ team }) => dto(teamOf(team)));

// PATCH /api/team – rename the team or change its slug (admins), or let the team's admins set spend
// caps and prices (`admins_manage_billing`: owners only, billing.delegate). A slug another team has
// is 409 slug_taken. Audited (team.update, before and after).
export const PATCH = route(
  { auth: "user", perm: "team.manage", body: TeamPatchBody },
  async ({ team, body, audit }) => {
    const acting = teamOf(team);
    if (body.admins_manage_billing !== undefined && !actingCan(acting, "billing.delegate"))
      throw new AppError(
        "forbidden",
        `Only the owners of ${acting.team.name} can decide whether admins set spend caps and prices.`,
      );
    const before = {
      name: acting.team.name,
      slug: acting.team.slug,
      admins_manage_billing: acting.team.adminsManageBilling,
    };
    const updated = await updateTeam(await getMigratedDb(), acting.team.id, {
      name: body.name,
      slug: body.slug,
      adminsManageBilling: body.admins_manage_billing,
    });
    const after = { name: updated.name, slug: updated.slug, admins_manage_billing: updated.adminsManageBilling };
    await audit("team.update", { target: acting.team.id, data: { before, after } });
    return dto({ ...acting, team: updated });
  },
);

// DELETE /api/team – delete the team (owner only). The body confirms with the team's slug and
// chooses what happens to its sandboxes: `terminate` (through the team's engine connection) or
// `leave`. Every member's engine token of the team is revoked. Audited (team.delete).
export const DELETE = route(
  { auth: "user", perm: "team.delete", body: TeamDeleteBody },
  async ({ team, body, audit }) => {
    const done = await deleteTeamAs(teamOf(team), body);
    // Audit rows outlive their team (migration 0005): the deletion is filed under the team it ends.
    await audit("team.delete", {
      targetType: "team",
      targetId: done.team.id,
      data: {
        name: done.team.name,
        slug: done.team.slug,
        sandboxes: done.sandboxes,
        terminated: done.terminated,
        tokens_revoked: done.tokensRevoked,
        members: done.members,
      },
    });
    return {
      deleted: true,
      sandboxes: done.sandboxes,
      terminated: done.terminated,
      tokens_revoked: done.tokensRevoked,
    };
  },
);
