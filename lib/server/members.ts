import "server-only";
import { changeMemberRole, removeTeamMember, revokeApiTokensOfDisabledMember } from "./access";
import type { Db } from "./db/index";
import { resetRateLimit } from "./db/rate-limit";
import { listActiveSessions, revokeAllSessionsForUser, revokeSessionById, type Session } from "./db/sessions";
import { inTransaction, lockRow } from "./db/util";
import type { Role } from "./db/teams";
import { AppError } from "./errors";
import { emailRateKey, SIGN_IN_LIMITS } from "./sign-in";
import { forgetRemembered } from "./session-cache";
import { revokeEngineAccess } from "./tokens";
import {
  canAdminister,
  canChangeRole,
  canLeave,
  canRemove,
  canTransferOwnership,
  type RuleRefusal,
  type TeamRole,
} from "../team-rules";

// A team's people, as its owners and admins manage them: the list (role, how they sign in, last
// active, locked out or not, disabled or not), role changes, removal, per-team disabling (their
// sessions and the team's engine tokens revoked at once), unlocking a sign-in lockout, and each
// member's sessions. Every rule is lib/team-rules.ts; taking access away goes through
// lib/server/access.ts, which revokes engine tokens on the engine at once.

export type SignInMethod = "password" | "sso";

/**
 * How each user signs in: "sso" for a user with an IdP identity (lib/server/db/sso.ts, keyed by
 * issuer and subject), "password" otherwise. One query, keyed by user id.
 */
export async function signInMethods(db: Db, userIds: readonly string[]): Promise<Map<string, SignInMethod>> {
  const sso =
    userIds.length === 0
      ? []
      : await db.selectFrom("sso_identities").select("user_id").where("user_id", "in", userIds).execute();
  const viaSso = new Set(sso.map((r) => r.user_id));
  return new Map(userIds.map((id) => [id, viaSso.has(id) ? ("sso" as const) : ("password" as const)]));
}

export interface MemberView {
  userId: string;
  email: string;
  name: string;
  role: Role;
  joinedAt: Date;
  /** Disabled in this team (their membership grants nothing until enabled). */
  disabledAt: Date | null;
  /** The account is disabled instance-wide. */
  accountDisabled: boolean;
  signInMethod: SignInMethod;
  /** The latest activity of any of their sessions, or null. */
  lastActiveAt: Date | null;
  activeSessions: number;
  /** Sign-in is locked out for their address (too many failed attempts), until this time. */
  lockedUntil: Date | null;
}

interface MemberRow {
  user_id: string;
  role: string;
  created_at: number | string;
  disabled_at: number | string | null;
  email: string;
  email_normalized: string;
  name: string;
  user_disabled_at: number | string | null;
}

const ORDER: Record<Role, number> = { owner: 0, admin: 1, member: 2, viewer: 3 };

async function memberRows(db: Db, teamId: string, userId?: string): Promise<MemberRow[]> {
  let q = db
    .selectFrom("memberships")
    .innerJoin("users", "users.id", "memberships.user_id")
    .select([
      "memberships.user_id",
      "memberships.role",
      "memberships.created_at",
      "memberships.disabled_at",
      "users.email",
      "users.email_normalized",
      "users.name",
      "users.disabled_at as user_disabled_at",
    ])
    .where("memberships.team_id", "=", teamId);
  if (userId !== undefined) q = q.where("memberships.user_id", "=", userId);
  return (await q.orderBy("memberships.created_at").execute()) as MemberRow[];
}

/** The team's members with what an admin needs to see, owners first. */
export async function listMembers(db: Db, teamId: string, now = Date.now()): Promise<MemberView[]> {
  const rows = await memberRows(db, teamId);
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.user_id);
  const [sessions, methods, locks] = await Promise.all([
    db
      .selectFrom("sessions")
      .select(["user_id", "last_seen_at", "revoked_at", "expires_at"])
      .where("user_id", "in", ids)
      .execute(),
    signInMethods(db, ids),
    db
      .selectFrom("login_attempts")
      .select(["key", "window_start", "count"])
      .where(
        "key",
        "in",
        rows.map((r) => emailRateKey(r.email)),
      )
      .execute(),
  ]);
  const last = new Map<string, number>();
  const live = new Map<string, number>();
  for (const s of sessions) {
    const seen = Number(s.last_seen_at);
    if (seen > (last.get(s.user_id) ?? 0)) last.set(s.user_id, seen);
    if (s.revoked_at === null && Number(s.expires_at) > now) live.set(s.user_id, (live.get(s.user_id) ?? 0) + 1);
  }
  const lockedUntil = new Map<string, number>();
  for (const l of locks) {
    const until = Number(l.window_start) + SIGN_IN_LIMITS.email.windowMs;
    if (Number(l.count) >= SIGN_IN_LIMITS.email.limit && until > now) lockedUntil.set(l.key, until);
  }
  return rows
    .map((r) => {
      const locked = lockedUntil.get(emailRateKey(r.email));
      return {
        userId: r.user_id,
        email: r.email,
        name: r.name,
        role: r.role as Role,
        joinedAt: new Date(Number(r.created_at)),
        disabledAt: r.disabled_at === null ? null : new Date(Number(r.disabled_at)),
        accountDisabled: r.user_disabled_at !== null,
        signInMethod: methods.get(r.user_id) ?? "password",
        lastActiveAt: last.has(r.user_id) ? new Date(last.get(r.user_id)!) : null,
        activeSessions: live.get(r.user_id) ?? 0,
        lockedUntil: locked === undefined ? null : new Date(locked),
      };
    })
    .sort((a, b) => ORDER[a.role] - ORDER[b.role] || a.joinedAt.getTime() - b.joinedAt.getTime());
}

/** The acting admin: who they are and their role in the team. */
export interface Actor {
  userId: string;
  teamId: string;
  role: TeamRole;
}

function throwRefusal(refusal: RuleRefusal | null): void {
  if (!refusal) return;
  const code =
    refusal.code === "not_allowed" || refusal.code === "self"
      ? refusal.code === "self"
        ? "conflict"
        : "forbidden"
      : refusal.code;
  throw new AppError(code, refusal.detail);
}

async function activeOwners(db: Db, teamId: string): Promise<number> {
  const row = await db
    .selectFrom("memberships")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("team_id", "=", teamId)
    .where("role", "=", "owner")
    .where("disabled_at", "is", null)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

const noSuchMember = () => new AppError("not_found", "There is no such member in this team.");

async function target(db: Db, teamId: string, userId: string): Promise<MemberRow> {
  const [row] = await memberRows(db, teamId, userId);
  if (!row) throw noSuchMember();
  return row;
}

/**
 * The member `userId` of the actor's team, once `rule` (one of lib/team-rules.ts's checks, given
 * the target's role, whether it is the actor, and the team's active owners) allows the action.
 */
async function allowedTarget(
  db: Db,
  actor: Actor,
  userId: string,
  rule: (target: { role: Role; self: boolean }, facts: { activeOwners: number }) => RuleRefusal | null,
): Promise<MemberRow> {
  const row = await target(db, actor.teamId, userId);
  const facts = { activeOwners: await activeOwners(db, actor.teamId) };
  throwRefusal(rule({ role: row.role as Role, self: userId === actor.userId }, facts));
  return row;
}

export interface MemberSnapshot {
  user_id: string;
  email: string;
  role: Role;
  disabled: boolean;
}

const snapshot = (r: MemberRow): MemberSnapshot => ({
  user_id: r.user_id,
  email: r.email,
  role: r.role as Role,
  disabled: r.disabled_at !== null,
});

/** Changes a member's role (rules: lib/team-rules.ts canChangeRole); the engine tokens follow the new role. */
export async function changeRole(
  db: Db,
  actor: Actor,
  userId: string,
  role: Role,
): Promise<{ before: MemberSnapshot; after: MemberSnapshot }> {
  const row = await allowedTarget(db, actor, userId, (t, facts) => canChangeRole(actor.role, t, role, facts));
  if (row.disabled_at !== null)
    throw new AppError("member_disabled", `${row.email} is disabled in this team. Enable them first.`);
  if (row.role !== role) await changeMemberRole({ teamId: actor.teamId, userId, role }, { db });
  return { before: snapshot(row), after: snapshot(await target(db, actor.teamId, userId)) };
}

/**
 * Removes a member: their sandboxes stay with the team (they belong to the team's engine account),
 * their engine tokens of the team are revoked at once.
 */
export async function removeMemberFromTeam(
  db: Db,
  actor: Actor,
  userId: string,
): Promise<{ before: MemberSnapshot; revokedTokens: number }> {
  const row = await allowedTarget(db, actor, userId, (t, facts) => canRemove(actor.role, t, facts));
  const { revoked } = await removeTeamMember({ teamId: actor.teamId, userId }, { db });
  return { before: snapshot(row), revokedTokens: revoked };
}

/** The signed-in member leaves the team (refused for the last owner); their engine tokens of it are revoked. */
export async function leaveTeam(db: Db, actor: Actor): Promise<{ before: MemberSnapshot; revokedTokens: number }> {
  const row = await target(db, actor.teamId, actor.userId);
  throwRefusal(canLeave(row.role as Role, { activeOwners: await activeOwners(db, actor.teamId) }));
  const { revoked } = await removeTeamMember({ teamId: actor.teamId, userId: actor.userId, left: true }, { db });
  return { before: snapshot(row), revokedTokens: revoked };
}

/**
 * Disables a member in this team: the membership grants nothing, every session of theirs is
 * revoked (they sign in again and find only their other teams), and their engine tokens of this
 * team are revoked on the engine at once.
 */
export async function disableMember(
  db: Db,
  actor: Actor,
  userId: string,
  now = Date.now(),
): Promise<{ before: MemberSnapshot; after: MemberSnapshot; revokedSessions: number; revokedTokens: number }> {
  const row = await allowedTarget(db, actor, userId, (t, facts) =>
    canAdminister(actor.role, t, { ...facts, disabling: true }),
  );
  if (row.disabled_at === null) {
    await inTransaction(db, async (trx) => {
      await lockRow(trx, "teams", actor.teamId);
      await trx
        .updateTable("memberships")
        .set({ disabled_at: now })
        .where("team_id", "=", actor.teamId)
        .where("user_id", "=", userId)
        .execute();
      // Re-counted under the team's lock: two admins disabling the last two owners at once.
      if ((await activeOwners(trx, actor.teamId)) === 0)
        throw new AppError("last_owner", "This is the team's last owner. Transfer ownership first.");
    });
    forgetRemembered();
  }
  const revokedSessions = await revokeAllSessionsForUser(db, userId, { now });
  const revokedTokens = await revokeEngineAccess(userId, { db, teamId: actor.teamId });
  await revokeApiTokensOfDisabledMember({ teamId: actor.teamId, userId }, { db });
  return {
    before: snapshot(row),
    after: snapshot(await target(db, actor.teamId, userId)),
    revokedSessions,
    revokedTokens,
  };
}

/** Enables a member disabled in this team again. */
export async function enableMember(
  db: Db,
  actor: Actor,
  userId: string,
): Promise<{ before: MemberSnapshot; after: MemberSnapshot }> {
  const row = await allowedTarget(db, actor, userId, (t, facts) => canAdminister(actor.role, t, facts));
  if (row.disabled_at !== null) {
    await db
      .updateTable("memberships")
      .set({ disabled_at: null })
      .where("team_id", "=", actor.teamId)
      .where("user_id", "=", userId)
      .execute();
    forgetRemembered();
  }
  return { before: snapshot(row), after: snapshot(await target(db, actor.teamId, userId)) };
}

/** Clears a member's sign-in lockout (the failed-attempt counter of their address). */
export async function unlockMember(db: Db, actor: Actor, userId: string): Promise<{ email: string }> {
  const row = await allowedTarget(db, actor, userId, (t, facts) => canAdminister(actor.role, t, facts));
  await resetRateLimit(db, emailRateKey(row.email));
  return { email: row.email };
}

/** A member's live sessions, most recently used first. */
export async function memberSessions(db: Db, actor: Actor, userId: string): Promise<Session[]> {
  await allowedTarget(db, actor, userId, (t, facts) => canAdminister(actor.role, t, facts));
  return listActiveSessions(db, userId);
}

/** Revokes one of a member's sessions. */
export async function revokeMemberSession(db: Db, actor: Actor, userId: string, sessionId: string): Promise<void> {
  await allowedTarget(db, actor, userId, (t, facts) => canAdminister(actor.role, t, facts));
  if (!(await revokeSessionById(db, sessionId, userId)))
    throw new AppError("not_found", "There is no such active session of this member.");
}

/**
 * Makes another member owner. The acting owner becomes admin unless `stayOwner`. Both role changes
 * go through access.ts, so engine tokens follow the roles.
 */
export async function transferOwnership(
  db: Db,
  actor: Actor,
  userId: string,
  opts: { stayOwner?: boolean } = {},
): Promise<{ before: MemberSnapshot[]; after: MemberSnapshot[] }> {
  const row = await target(db, actor.teamId, userId);
  const self = await target(db, actor.teamId, actor.userId);
  throwRefusal(canTransferOwnership(actor.role, { self: userId === actor.userId, disabled: row.disabled_at !== null }));
  await changeMemberRole({ teamId: actor.teamId, userId, role: "owner" }, { db });
  if (!opts.stayOwner) await changeMemberRole({ teamId: actor.teamId, userId: actor.userId, role: "admin" }, { db });
  return {
    before: [snapshot(row), snapshot(self)],
    after: [snapshot(await target(db, actor.teamId, userId)), snapshot(await target(db, actor.teamId, actor.userId))],
  };
}
