import { getMigratedDb } from "../../../../lib/server/db/index";
import { AppError } from "../../../../lib/server/errors";
import { limitInvitationCalls } from "../../../../lib/server/invitation-limits";
import { acceptAsNewUser, acceptByToken } from "../../../../lib/server/invitations";
import { getTeam } from "../../../../lib/server/db/teams";
import { signInThroughNextAuth } from "../../../../lib/server/next-auth";
import { route } from "../../../../lib/server/route";
import { signInError } from "../../../../lib/server/sign-in";
import { AcceptInvitationBody } from "../../../../lib/validations/team";

export const runtime = "nodejs";

// POST /api/invitations/accept – accept an invitation by its link's token.
// - Signed in as the invited address: {token} adds the membership.
// - Not signed in, a new person: {token, name, password} makes their account with the invited
//   address, adds the membership and signs them in. An address that has an account already: 409
//   account_exists (sign in first, then accept).
// Used, revoked or expired links: 410 invitation_used / invitation_revoked / invitation_expired.
export const POST = route({ auth: "optional", body: AcceptInvitationBody }, async ({ req, body, ip, user }) => {
  const db = await getMigratedDb();
  await limitInvitationCalls(db, "accept", ip);
  if (user) {
    const m = await acceptByToken(db, { token: body.token, user, ip });
    // The inviting team's slug: the browser lands in that team (/team?team=<slug>).
    const team = await getTeam(db, m.teamId);
    return { team_id: m.teamId, team_slug: team?.slug ?? null, role: m.role, signed_in: true };
  }
  if (body.name === undefined || body.password === undefined)
    throw new AppError(
      "validation_error",
      "Name and password are required to create your account (or sign in first, if you have one).",
      {
        errors: {
          ...(body.name ? {} : { name: "is required" }),
          ...(body.password ? {} : { password: "is required" }),
        },
      },
    );
  const created = await acceptAsNewUser(db, { token: body.token, name: body.name, password: body.password, ip });
  const { outcome, setCookies } = await signInThroughNextAuth(req, {
    email: created.user.email,
    password: body.password,
  });
  if (!outcome.ok) throw signInError(outcome);
  const headers = new Headers({ "content-type": "application/json" });
  for (const cookie of setCookies) headers.append("set-cookie", cookie);
  const team = await getTeam(db, created.teamId);
  const answer = { team_id: created.teamId, team_slug: team?.slug ?? null, role: created.role, signed_in: true };
  return new Response(JSON.stringify(answer), {
    status: 201,
    headers,
  });
});
