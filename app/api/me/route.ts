import { sessionOf } from "../../../lib/server/auth";
import { updateProfile } from "../../../lib/server/account";
import { getMigratedDb } from "../../../lib/server/db/index";
import { route } from "../../../lib/server/route";
import { ProfileBody } from "../../../lib/validations/account";

export const runtime = "nodejs";

// GET /api/me – the signed-in user, their session and their teams (a DTO: no token, no hash), and
// the team this request acts in (its X-Baton-Team, else the default: lib/server/acting-team.ts).
export const GET = route({ auth: "user" }, async ({ current, team: active }) => {
  return {
    user: { id: current.user.id, name: current.user.name, email: current.user.email },
    session: {
      id: sessionOf(current).id,
      created_at: sessionOf(current).createdAt.toISOString(),
      expires_at: sessionOf(current).expiresAt.toISOString(),
    },
    memberships: current.memberships.map(({ team, membership }) => ({
      team: { id: team.id, name: team.name, slug: team.slug },
      role: membership.role,
    })),
    active_team_id: active?.team.id ?? null,
  };
});

// PATCH /api/me – the user's own display name. Audited (user.update, before and after).
export const PATCH = route({ auth: "user", body: ProfileBody }, async ({ current, body, audit }) => {
  const change = await updateProfile(await getMigratedDb(), current, body.name);
  await audit("user.update", { target: current.user.id, data: change });
  return { user: { id: current.user.id, name: change.after.name, email: current.user.email } };
});
