import { createTeamWithOwner, slugify } from "../../../lib/server/db/teams";
import { DbConflictError } from "../../../lib/server/db/errors";
import { getMigratedDb } from "../../../lib/server/db/index";
import { AppError } from "../../../lib/server/errors";
import { json, route } from "../../../lib/server/route";
import { CreateTeamBody } from "../../../lib/validations/teams";

export const runtime = "nodejs";

// A user's teams. Which team a request acts in is the URL's (?team=<slug>, X-Baton-Team), never a
// server-side "current team": creating one does not switch any tab to it, the browser navigates.

/** The most teams one user may own (creating more is refused with 409 team_limit). */
export const MAX_OWNED_TEAMS = 20;

// GET /api/teams – the teams the user is a member of (name, slug, role), oldest membership first
export const GET = route({ auth: "user" }, async ({ current, team }) => ({
  teams: current.memberships.map(({ team: t, membership }) => ({
    id: t.id,
    name: t.name,
    slug: t.slug,
    role: membership.role,
    acting: t.id === team?.team.id,
  })),
}));

// POST /api/teams – create a team ({name}); its slug comes from the name, the creator is its owner
export const POST = route({ auth: "user", body: CreateTeamBody }, async ({ user, current, body, audit }) => {
  const owned = current.memberships.filter((m) => m.membership.role === "owner").length;
  if (owned >= MAX_OWNED_TEAMS)
    throw new AppError(
      "team_limit",
      `You already own ${MAX_OWNED_TEAMS} teams, the most one person may own. Delete one, or transfer its ownership, first.`,
    );
  const db = await getMigratedDb();
  const base = slugify(body.name).slice(0, 44).replace(/-+$/, "") || "team";
  for (let n = 1; n <= 50; n++) {
    const slug = n === 1 ? base : `${base}-${n}`;
    try {
      const { team } = await createTeamWithOwner(db, { name: body.name, slug, ownerId: user.id });
      const dto = { id: team.id, name: team.name, slug: team.slug, role: "owner" as const };
      await audit("team.create", {
        teamId: team.id,
        target: team.id,
        data: { after: { name: team.name, slug: team.slug } },
      });
      return json({ team: dto }, { status: 201 });
    } catch (err) {
      if (!(err instanceof DbConflictError && err.code === "slug_taken")) throw err;
    }
  }
  throw new AppError("slug_taken", "Every slug made from this name is taken. Choose another name.");
});
