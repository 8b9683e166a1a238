import { getMigratedDb } from "../../../../../lib/server/db/index";
import { getSsoConfig } from "../../../../../lib/server/db/sso";
import { AppError } from "../../../../../lib/server/errors";
import { ROLES_SYNCED_DETAIL } from "../../../../../lib/team-rules";
import { changeRole, removeMemberFromTeam } from "../../../../../lib/server/members";
import { route } from "../../../../../lib/server/route";
import { actorOf } from "../../../../../lib/server/team-api";
import { ChangeRoleBody, MemberParams } from "../../../../../lib/validations/team";

export const runtime = "nodejs";

// PATCH /api/team/members/[userId] – change a member's role ({role}); never above the actor's own,
// owners only by owners, never the last owner (lib/team-rules.ts). Their engine tokens follow the role.
export const PATCH = route(
  { auth: "user", perm: "members.manage", params: MemberParams, body: ChangeRoleBody },
  async ({ team, params, body, audit }) => {
    const db = await getMigratedDb();
    // While the team's SSO syncs roles from the IdP's groups, the next sign-in would undo a change here.
    if ((await getSsoConfig(db, team!.team.id))?.groupSync) throw new AppError("roles_synced", ROLES_SYNCED_DETAIL);
    const { before, after } = await changeRole(db, actorOf(team), params.userId, body.role);
    if (before.role !== after.role)
      await audit("member.role_change", { target: params.userId, data: { before, after } });
    return { member: after };
  },
);

// DELETE /api/team/members/[userId] – remove a member from the team. Their sandboxes stay with the
// team; their engine tokens of the team are revoked at once.
export const DELETE = route(
  { auth: "user", perm: "members.manage", params: MemberParams },
  async ({ team, params, audit }) => {
    const { before, revokedTokens } = await removeMemberFromTeam(await getMigratedDb(), actorOf(team), params.userId);
    await audit("member.remove", {
      target: params.userId,
      data: { before, after: null, engine_tokens_revoked: revokedTokens },
    });
    return { removed: params.userId, engine_tokens_revoked: revokedTokens };
  },
);
