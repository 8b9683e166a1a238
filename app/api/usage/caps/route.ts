import { getMigratedDb } from "../../../../lib/server/db/index";
import { getMembership } from "../../../../lib/server/db/teams";
import { AppError } from "../../../../lib/server/errors";
import { route } from "../../../../lib/server/route";
import { CapBody, capsView } from "../../../../lib/server/usage/caps-api";
import { setCap } from "../../../../lib/server/usage/caps-store";

export const runtime = "nodejs";

// GET /api/usage/caps – the team's spend caps with how close each is, as the caps job last
// computed it: admins and owners see everyone's; members and viewers the team's and their own.
export const GET = route({ auth: "user", perm: "usage.read" }, async ({ team }) =>
  capsView(await getMigratedDb(), team!),
);

// PUT /api/usage/caps {user_id?, window, limit_micro, action} – sets the team's cap (user_id null)
// or a member's, for a UTC month or day (billing.manage: owners, and admins when the owners allow
// it). A member's cap cannot be higher than the team's: 422 cap_conflict. Takes effect at the
// job's next run; one set below what is already spent blocks at once. Audited with before and after.
export const PUT = route(
  { auth: "user", perm: "billing.manage", body: CapBody },
  async ({ team, user, body, audit }) => {
    const db = await getMigratedDb();
    const teamId = team!.team.id;
    if (body.user_id !== null && !(await getMembership(db, teamId, body.user_id)))
      throw new AppError("not_found", "No member of this team has that user id.");
    const { before, after } = await setCap(db, {
      teamId,
      userId: body.user_id,
      window: body.window,
      limitMicro: body.limit_micro,
      action: body.action,
      by: user.id,
    });
    const view = (c: typeof after | null) =>
      c && { subject: c.userId ?? "team", window: c.window, limit_micro: c.limitMicro, action: c.action };
    await audit("spend_cap.set", {
      targetType: "spend_cap",
      targetId: after.id,
      data: { before: view(before), after: view(after) },
    });
    return capsView(db, team!);
  },
);
