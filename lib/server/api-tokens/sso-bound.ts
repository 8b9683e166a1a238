import "server-only";
import type { Db } from "../db/index";
import { ssoTokenBinding } from "../db/sso";
import type { Role } from "../db/teams";

// The API tokens of a team's SSO people last no longer than their SSO session would (issue 21/23).
// A person removed at the IdP (or dropped from the allowed groups) loses their browser session after
// the team's SSO session maximum, but Baton only learns of the removal at their next SSO sign-in,
// which never comes: a token they made would otherwise work until it expires, or forever. So a token
// of someone who signs in to the team through SSO (they have an SSO identity in it, or SSO is
// enforced for their address's domain) works only until their latest SSO sign-in + the session
// maximum. A new sign-in through the IdP proves the membership again and so renews every such token
// at once (it updates last_sign_in_at, lib/server/sso/flow.ts). The team's owner is exempt: their
// password sign-in is the break-glass path when the IdP is down, and their tokens go with it.

const HOUR_MS = 3_600_000;

/** Until when a member's tokens of a team work (ms epoch; -Infinity: never signed in through SSO), and why. */
export interface SsoTokenBound {
  deadline: number;
  sessionMaxHours: number;
  lastSignInAt: number | null;
}

/** Whether SSO limits the tokens of `user` (with `role`, unnarrowed) in `teamId`, and until when; null: it does not. */
export async function ssoTokenBound(
  db: Db,
  teamId: string,
  user: { id: string; email: string },
  role: Role,
): Promise<SsoTokenBound | null> {
  if (role === "owner") return null;
  const binding = await ssoTokenBinding(db, teamId, user);
  if (!binding || (binding.lastSignInAt === null && !binding.enforcedForEmail)) return null;
  const { sessionMaxHours, lastSignInAt } = binding;
  return {
    deadline: lastSignInAt === null ? Number.NEGATIVE_INFINITY : lastSignInAt + sessionMaxHours * HOUR_MS,
    sessionMaxHours,
    lastSignInAt,
  };
}

/** The refusal's sentence: what ended the token, and how to renew it. */
export function ssoReauthDetail(bound: SsoTokenBound, team: { name: string; slug: string }): string {
  const why =
    bound.lastSignInAt === null
      ? `you have not signed in to it through SSO yet`
      : `your last SSO sign-in was more than ${bound.sessionMaxHours} hours ago (${new Date(bound.lastSignInAt).toISOString()})`;
  return `Your API tokens of the team ${team.name} (${team.slug}) work for ${bound.sessionMaxHours} hours after your last sign-in through its SSO, and ${why}. Sign in to Baton through SSO again to renew them.`;
}
