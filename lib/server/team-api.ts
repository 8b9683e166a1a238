import "server-only";
import type { ActingTeam } from "./acting-team";
import type { Session } from "./db/sessions";
import { getEnv } from "./env";
import { AppError } from "./errors";
import type { InvitationView, IssuedInvitation } from "./invitations";
import type { Actor, MemberView } from "./members";
import { withUpstream } from "./upstream";
import type { InvitationDto, IssuedInvitationDto, MemberDto, SessionDto } from "../validations/team";

// What the /api/team routes share: the acting admin, the DTOs, the origin of invitation links, and
// the best-effort count of each member's sandboxes.

/** The metadata key the console stamps on the sandboxes a user creates (the creator's user id). */
export const CREATOR_METADATA_KEY = "baton.user";

export function actorOf(team: ActingTeam | null): Actor {
  if (!team) throw new AppError("forbidden", "You are not a member of a team.");
  return { userId: team.userId, teamId: team.team.id, role: team.role };
}

/** The origin invitation links are made with: BATON_URL when set, else the request's own (its Host is checked by route()). */
export function linkOrigin(req: Request): string {
  return getEnv().BATON_URL ?? new URL(req.url).origin;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function sandboxesHref(userId: string): string {
  return `/sandboxes?creator=${encodeURIComponent(userId)}`;
}

export function toMemberDto(m: MemberView, youId: string, counts: Map<string, number> | null): MemberDto {
  return {
    user_id: m.userId,
    email: m.email,
    name: m.name,
    role: m.role,
    joined_at: m.joinedAt.toISOString(),
    disabled: m.disabledAt !== null,
    account_disabled: m.accountDisabled,
    sign_in_method: m.signInMethod,
    last_active_at: iso(m.lastActiveAt),
    active_sessions: m.activeSessions,
    locked_until: iso(m.lockedUntil),
    sandbox_count: counts ? (counts.get(m.userId) ?? 0) : null,
    sandboxes_href: sandboxesHref(m.userId),
    is_you: m.userId === youId,
  };
}

export function toSessionDto(s: Session): SessionDto {
  return {
    id: s.id,
    created_at: s.createdAt.toISOString(),
    last_seen_at: s.lastSeenAt.toISOString(),
    expires_at: s.expiresAt.toISOString(),
    ip: s.ip,
    user_agent: s.userAgent,
  };
}

export function toInvitationDto(i: InvitationView): InvitationDto {
  return {
    id: i.id,
    email: i.email,
    role: i.role,
    invited_by: i.invitedBy,
    created_at: i.createdAt.toISOString(),
    expires_at: i.expiresAt.toISOString(),
    last_sent_at: iso(i.lastSentAt),
    state: i.state,
  };
}

export function toIssuedDto(i: IssuedInvitation): IssuedInvitationDto {
  return {
    invitation: toInvitationDto(i.invitation),
    link: i.link,
    mailed: i.mailed,
    mail_error: i.mailError,
    replaced: i.replaced,
  };
}

const LIVE_STATUSES = ["creating", "running", "pausing", "paused", "resuming"];
const COUNT_TIMEOUT_MS = 3_000;
const COUNT_MAX_SANDBOXES = 2_000;

/**
 * How many live sandboxes each user created in the acting team's engine account, from the
 * creator metadata: one listing of the team's sandboxes (the contract's `status` filter), grouped
 * by creator. Best effort: null when the team has no connection or its API does not answer in time.
 */
export async function sandboxCountsByCreator(team: ActingTeam | null): Promise<Map<string, number> | null> {
  if (!team?.connection) return null;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), COUNT_TIMEOUT_MS);
  try {
    return await withUpstream(team, async (orkestr) => {
      const counts = new Map<string, number>();
      let seen = 0;
      for await (const sbx of orkestr.sandboxes.listAll(
        { status: LIVE_STATUSES, limit: 100 },
        { signal: controller.signal },
      )) {
        const creator = sbx.metadata?.[CREATOR_METADATA_KEY];
        if (typeof creator === "string") counts.set(creator, (counts.get(creator) ?? 0) + 1);
        if (++seen >= COUNT_MAX_SANDBOXES) break;
      }
      return counts;
    });
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}
