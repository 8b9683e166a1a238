import { getMigratedDb } from "../../../../lib/server/db/index";
import { limitInvitationCalls } from "../../../../lib/server/invitation-limits";
import { lookupInvitation } from "../../../../lib/server/invitations";
import { route } from "../../../../lib/server/route";
import { LookupInvitationBody, type InvitationLookupDto } from "../../../../lib/validations/team";

export const runtime = "nodejs";

// POST /api/invitations/lookup – what an invitation link is for ({token}): team, address, role, and
// whether it is pending, used, revoked or expired. Public (the link is the credential); POST keeps
// the token out of URLs and logs. Limited per client address.
export const POST = route(
  { auth: "optional", body: LookupInvitationBody },
  async ({ body, ip, user }): Promise<InvitationLookupDto> => {
    const db = await getMigratedDb();
    await limitInvitationCalls(db, "lookup", ip);
    const found = await lookupInvitation(db, body.token);
    return {
      state: found.state,
      email: found.email,
      role: found.role,
      team: found.team,
      invited_by: found.invitedBy,
      expires_at: found.expiresAt.toISOString(),
      account_exists: found.accountExists,
      signed_in_as: user?.email ?? null,
    };
  },
);
