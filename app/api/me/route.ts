import { actingTeam } from "../../../lib/server/auth";
import { route } from "../../../lib/server/route";

export const runtime = "nodejs";

// GET /api/me – the signed-in user, their session and their teams (a DTO: no token, no hash), and
// the team requests act in (the active connection's, lib/server/acting-team.ts).
export const GET = route({ auth: "user" }, async ({ current }) => {
  const active = actingTeam(current);
  return {
    user: { id: current.user.id, name: current.user.name, email: current.user.email },
    session: {
      id: current.session.id,
      created_at: current.session.createdAt.toISOString(),
      expires_at: current.session.expiresAt.toISOString(),
    },
    memberships: current.memberships.map(({ team, membership }) => ({
      team: { id: team.id, name: team.name, slug: team.slug },
      role: membership.role,
    })),
    active_team_id: active?.team.id ?? null,
  };
});
