import "server-only";
import { z } from "zod";
import { newId } from "../ids";
import { DbConflictError, DbNotFoundError, isUniqueViolation } from "./errors";
import type { Db } from "./index";
import { forgetRemembered } from "../session-cache";
import { ROLES, type Role } from "./schema";
import { inForce, newSecretToken, secretTokenHash } from "./secret-tokens";
import { normalizeEmail, UserRow, type User } from "./users";
import { EpochDate, inTransaction, lockRow, parseRow } from "./util";

// Teams, memberships and invitations. Every team keeps at least one owner: the changes that could
// remove the last one lock the team row and re-count inside their transaction.

export const RoleSchema = z.enum(ROLES);
export { ROLES, type Role };

export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$/;
const SlugInput = z.string().regex(SLUG_PATTERN, { error: "slug must be 1-48 of a-z, 0-9 and inner dashes" });
const TeamNameInput = z.string().trim().min(1).max(100);
const SpendCapInput = z.number().finite().nonnegative().nullable();

export interface Team {
  id: string;
  name: string;
  slug: string;
  createdAt: Date;
  spendCapEur: number | null;
  /** The owners let the team's admins set spend caps and prices (billing.manage). */
  adminsManageBilling: boolean;
}

export interface Membership {
  teamId: string;
  userId: string;
  role: Role;
  createdAt: Date;
}

export interface Invitation {
  id: string;
  teamId: string;
  email: string;
  role: Role;
  invitedBy: string | null;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
}

const TeamRow = z
  .object({
    id: z.string().min(1),
    name: z.string(),
    slug: z.string().regex(SLUG_PATTERN),
    created_at: EpochDate,
    spend_cap_eur: z.number().finite().nullable(),
    // PostgreSQL answers an integer column as a number; absent on rows written before 0010.
    admins_manage_billing: z.coerce.number().int().optional(),
  })
  .transform((r): Team => ({
    id: r.id,
    name: r.name,
    slug: r.slug,
    createdAt: r.created_at,
    spendCapEur: r.spend_cap_eur,
    adminsManageBilling: r.admins_manage_billing === 1,
  }));

const MembershipRow = z
  .object({
    team_id: z.string().min(1),
    user_id: z.string().min(1),
    role: RoleSchema,
    created_at: EpochDate,
  })
  .transform((r): Membership => ({ teamId: r.team_id, userId: r.user_id, role: r.role, createdAt: r.created_at }));

const InvitationRow = z
  .object({
    id: z.string().min(1),
    team_id: z.string().min(1),
    email: z.string().min(1),
    role: RoleSchema,
    invited_by: z.string().nullable(),
    created_at: EpochDate,
    expires_at: EpochDate,
    accepted_at: EpochDate.nullable(),
  })
  .transform((r): Invitation => ({
    id: r.id,
    teamId: r.team_id,
    email: r.email,
    role: r.role,
    invitedBy: r.invited_by,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    acceptedAt: r.accepted_at,
  }));

const TEAM_COLUMNS = [
  "teams.id",
  "teams.name",
  "teams.slug",
  "teams.created_at",
  "teams.spend_cap_eur",
  "teams.admins_manage_billing",
] as const;
const INVITATION_COLUMNS = [
  "id",
  "team_id",
  "email",
  "role",
  "invited_by",
  "created_at",
  "expires_at",
  "accepted_at",
] as const;

/** A slug candidate from a display name ("Acme GmbH" → "acme-gmbh"); may still collide. */
export function slugify(name: string): string {
  const s = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/g, "");
  return s || "team";
}

function teamConflict(err: unknown): never {
  if (isUniqueViolation(err, { index: "teams_slug_key", column: "teams.slug" })) {
    throw new DbConflictError("slug_taken", "a team with this slug already exists", { cause: err });
  }
  throw err;
}

export interface CreateTeamInput {
  name: string;
  slug: string;
  ownerId: string;
  spendCapEur?: number | null;
  now?: number;
}

/** Creates a team and its owner's membership in one transaction. */
export async function createTeamWithOwner(
  db: Db,
  input: CreateTeamInput,
): Promise<{ team: Team; membership: Membership }> {
  const now = input.now ?? Date.now();
  const team = {
    id: newId("team"),
    name: TeamNameInput.parse(input.name),
    slug: SlugInput.parse(input.slug),
    created_at: now,
    spend_cap_eur: SpendCapInput.parse(input.spendCapEur ?? null),
  };
  const membership = { team_id: team.id, user_id: input.ownerId, role: "owner" as Role, created_at: now };
  try {
    await inTransaction(db, async (trx) => {
      await trx.insertInto("teams").values(team).execute();
      await trx.insertInto("memberships").values(membership).execute();
    });
  } catch (err) {
    teamConflict(err);
  }
  forgetRemembered(); // lib/server/session-cache.ts: the session check reads this again
  return { team: parseRow("teams", TeamRow, team), membership: parseRow("memberships", MembershipRow, membership) };
}

export async function getTeam(db: Db, teamId: string): Promise<Team | null> {
  const row = await db.selectFrom("teams").select(TEAM_COLUMNS).where("teams.id", "=", teamId).executeTakeFirst();
  return row ? parseRow("teams", TeamRow, row) : null;
}

export async function findTeamBySlug(db: Db, slug: string): Promise<Team | null> {
  const row = await db.selectFrom("teams").select(TEAM_COLUMNS).where("teams.slug", "=", slug).executeTakeFirst();
  return row ? parseRow("teams", TeamRow, row) : null;
}

export async function updateTeam(
  db: Db,
  teamId: string,
  patch: { name?: string; slug?: string; spendCapEur?: number | null; adminsManageBilling?: boolean },
): Promise<Team> {
  const set = {
    ...(patch.name !== undefined ? { name: TeamNameInput.parse(patch.name) } : {}),
    ...(patch.slug !== undefined ? { slug: SlugInput.parse(patch.slug) } : {}),
    ...(patch.spendCapEur !== undefined ? { spend_cap_eur: SpendCapInput.parse(patch.spendCapEur) } : {}),
    ...(patch.adminsManageBilling !== undefined ? { admins_manage_billing: patch.adminsManageBilling ? 1 : 0 } : {}),
  };
  if (Object.keys(set).length > 0) {
    try {
      await db.updateTable("teams").set(set).where("id", "=", teamId).execute();
    } catch (err) {
      teamConflict(err);
    }
    forgetRemembered(); // lib/server/session-cache.ts: the session check reads this again
  }
  const team = await getTeam(db, teamId);
  if (!team) throw new DbNotFoundError("team");
  return team;
}

/** Deletes a team; memberships, invitations, its connections and audit events go with it. */
export async function deleteTeam(db: Db, teamId: string): Promise<boolean> {
  const res = await db.deleteFrom("teams").where("id", "=", teamId).executeTakeFirst();
  forgetRemembered(); // lib/server/session-cache.ts: the session check reads this again
  return res.numDeletedRows > 0n;
}

/** The teams a user belongs to, with their role, oldest membership first. */
export async function listMembershipsForUser(
  db: Db,
  userId: string,
): Promise<Array<{ team: Team; membership: Membership }>> {
  const rows = await db
    .selectFrom("memberships")
    .innerJoin("teams", "teams.id", "memberships.team_id")
    .select(TEAM_COLUMNS)
    .select([
      "memberships.team_id",
      "memberships.user_id",
      "memberships.role",
      "memberships.created_at as m_created_at",
    ])
    .where("memberships.user_id", "=", userId)
    .where("memberships.disabled_at", "is", null) // a disabled membership grants nothing (0006_members)
    .orderBy("memberships.created_at")
    .orderBy("teams.slug")
    .execute();
  return rows.map((r) => ({
    team: parseRow("teams", TeamRow, r),
    membership: parseRow("memberships", MembershipRow, { ...r, created_at: r.m_created_at }),
  }));
}

/** One user's membership in one team, or null (also while it is disabled): the basis of every authorization check. */
export async function getMembership(db: Db, teamId: string, userId: string): Promise<Membership | null> {
  const row = await db
    .selectFrom("memberships")
    .select(["team_id", "user_id", "role", "created_at"])
    .where("team_id", "=", teamId)
    .where("user_id", "=", userId)
    .where("disabled_at", "is", null) // a disabled membership grants nothing (0006_members)
    .executeTakeFirst();
  return row ? parseRow("memberships", MembershipRow, row) : null;
}

/** A team's members with their users, owners first. */
export async function listTeamMembers(db: Db, teamId: string): Promise<Array<{ user: User; membership: Membership }>> {
  const rows = await db
    .selectFrom("memberships")
    .innerJoin("users", "users.id", "memberships.user_id")
    .select([
      "memberships.team_id",
      "memberships.user_id",
      "memberships.role",
      "memberships.created_at as m_created_at",
      "users.id",
      "users.email",
      "users.name",
      "users.created_at",
      "users.updated_at",
      "users.disabled_at",
    ])
    .where("memberships.team_id", "=", teamId)
    .orderBy("memberships.created_at")
    .execute();
  const order: Record<Role, number> = { owner: 0, admin: 1, member: 2, viewer: 3 };
  return rows
    .map((r) => ({
      user: parseRow("users", UserRow, r),
      membership: parseRow("memberships", MembershipRow, { ...r, created_at: r.m_created_at }),
    }))
    .sort((a, b) => order[a.membership.role] - order[b.membership.role]);
}

/** Adds a user to a team. Throws DbConflictError("already_member"). */
export async function addMember(
  db: Db,
  input: { teamId: string; userId: string; role: Role; now?: number },
): Promise<Membership> {
  const row = {
    team_id: input.teamId,
    user_id: input.userId,
    role: RoleSchema.parse(input.role),
    created_at: input.now ?? Date.now(),
  };
  try {
    await db.insertInto("memberships").values(row).execute();
  } catch (err) {
    if (isUniqueViolation(err))
      throw new DbConflictError("already_member", "the user is already a member of this team", { cause: err });
    throw err;
  }
  forgetRemembered(); // lib/server/session-cache.ts: the session check reads this again
  return parseRow("memberships", MembershipRow, row);
}

async function assertOwnerRemains(trx: Db, teamId: string): Promise<void> {
  const row = await trx
    .selectFrom("memberships")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("team_id", "=", teamId)
    .where("role", "=", "owner")
    .where("disabled_at", "is", null)
    .executeTakeFirst();
  if (Number(row?.n ?? 0) === 0) {
    throw new DbConflictError("last_owner", "a team needs at least one owner: make someone else owner first");
  }
}

/** Changes a member's role; refuses to demote the last owner. */
export async function setMemberRole(
  db: Db,
  input: { teamId: string; userId: string; role: Role },
): Promise<Membership> {
  const role = RoleSchema.parse(input.role);
  const changed = await inTransaction(db, async (trx) => {
    await lockRow(trx, "teams", input.teamId);
    const res = await trx
      .updateTable("memberships")
      .set({ role })
      .where("team_id", "=", input.teamId)
      .where("user_id", "=", input.userId)
      .executeTakeFirst();
    if (res.numUpdatedRows === 0n) throw new DbNotFoundError("membership");
    await assertOwnerRemains(trx, input.teamId);
    const m = await getMembership(trx, input.teamId, input.userId);
    if (!m) throw new DbNotFoundError("membership");
    return m;
  });
  forgetRemembered(); // lib/server/session-cache.ts: the session check reads this again
  return changed;
}

/** Removes a member (or lets one leave); refuses to remove the last owner. */
export async function removeMember(db: Db, input: { teamId: string; userId: string }): Promise<void> {
  await inTransaction(db, async (trx) => {
    await lockRow(trx, "teams", input.teamId);
    const res = await trx
      .deleteFrom("memberships")
      .where("team_id", "=", input.teamId)
      .where("user_id", "=", input.userId)
      .executeTakeFirst();
    if (res.numDeletedRows === 0n) throw new DbNotFoundError("membership");
    await assertOwnerRemains(trx, input.teamId);
  });
  forgetRemembered(); // lib/server/session-cache.ts: the session check reads this again
}

// ---------------------------------------------------------------------------------------------
// Invitations: a random token is mailed or shown once; only sha256(token) is stored (secret-tokens.ts).

export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export async function createInvitation(
  db: Db,
  input: { teamId: string; email: string; role: Role; invitedBy: string | null; ttlMs?: number; now?: number },
): Promise<{ token: string; invitation: Invitation }> {
  const now = input.now ?? Date.now();
  const { token, hash } = newSecretToken();
  const email = z.string().trim().max(254).pipe(z.email()).parse(input.email);
  const row = {
    id: newId("inv"),
    team_id: input.teamId,
    email,
    email_normalized: normalizeEmail(email),
    role: RoleSchema.parse(input.role),
    token_hash: hash,
    invited_by: input.invitedBy,
    created_at: now,
    expires_at: now + (input.ttlMs ?? INVITATION_TTL_MS),
    accepted_at: null,
  };
  await db.insertInto("invitations").values(row).execute();
  return { token, invitation: parseRow("invitations", InvitationRow, row) };
}

/** A team's invitations that are neither accepted, revoked nor expired, newest first. */
export async function listPendingInvitations(db: Db, teamId: string, now = Date.now()): Promise<Invitation[]> {
  const rows = await db
    .selectFrom("invitations")
    .select(INVITATION_COLUMNS)
    .where("team_id", "=", teamId)
    .where(inForce("invitations", now))
    .where("revoked_at", "is", null)
    .orderBy("created_at", "desc")
    .execute();
  return rows.map((r) => parseRow("invitations", InvitationRow, r));
}

/** A pending invitation by its token, or null (unknown, used, revoked or expired). */
export async function findPendingInvitation(db: Db, token: string, now = Date.now()): Promise<Invitation | null> {
  const hash = secretTokenHash(token);
  if (!hash) return null;
  const row = await db
    .selectFrom("invitations")
    .select(INVITATION_COLUMNS)
    .where("token_hash", "=", hash)
    .where(inForce("invitations", now))
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return row ? parseRow("invitations", InvitationRow, row) : null;
}

export async function deleteInvitation(db: Db, teamId: string, invitationId: string): Promise<boolean> {
  const res = await db
    .deleteFrom("invitations")
    .where("team_id", "=", teamId)
    .where("id", "=", invitationId)
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}

/**
 * Accepts an invitation for a signed-in user whose email matches it: marks it used (once, even under
 * concurrency) and adds the membership, in one transaction. An existing membership is kept as is.
 */
export async function acceptInvitation(
  db: Db,
  input: { token: string; user: User; now?: number },
): Promise<Membership> {
  const now = input.now ?? Date.now();
  const accepted = await inTransaction(db, async (trx) => {
    const inv = await findPendingInvitation(trx, input.token, now);
    if (!inv) throw new DbNotFoundError("invitation", "the invitation does not exist, was already used or has expired");
    if (normalizeEmail(inv.email) !== normalizeEmail(input.user.email)) {
      throw new DbConflictError("invitation_email_mismatch", "this invitation was sent to another email address");
    }
    const used = await trx
      .updateTable("invitations")
      .set({ accepted_at: now })
      .where("id", "=", inv.id)
      .where("accepted_at", "is", null)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    if (used.numUpdatedRows === 0n) throw new DbNotFoundError("invitation", "the invitation was already used");
    await trx
      .insertInto("memberships")
      .values({ team_id: inv.teamId, user_id: input.user.id, role: inv.role, created_at: now })
      .onConflict((oc) => oc.columns(["team_id", "user_id"]).doNothing())
      .execute();
    const m = await getMembership(trx, inv.teamId, input.user.id);
    if (!m) throw new DbNotFoundError("membership");
    return m;
  });
  forgetRemembered(); // lib/server/session-cache.ts: the session check reads this again
  return accepted;
}
