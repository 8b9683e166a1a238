import "server-only";
import { hashPassword } from "./crypto";
import type { Db } from "./db/index";
import { recordAudit } from "./db/audit";
import { acceptInvitation, createInvitation, getTeam, INVITATION_TTL_MS, type Role } from "./db/teams";
import { secretTokenHash } from "./db/secret-tokens";
import { createUser, findUserByEmail, normalizeEmail, type User } from "./db/users";
import { DbConflictError } from "./db/errors";
import { AppError } from "./errors";
import { sendMail } from "./mail";
import { forgetRemembered } from "./session-cache";
import { canInvite, type TeamRole } from "../team-rules";

// Invitations as a team admin runs them: invite by email with a role (never above the inviter's
// own), one pending invitation per address and team (inviting again replaces it), resend (a new
// link; the old one is dead), revoke, and acceptance by a new person (who makes their account on
// the invitation page) or by an existing user signed in as the invited address. The link holds a
// random 32-byte token shown once to the inviter and mailed when mail is configured
// (lib/server/mail.ts); only its SHA-256 is stored (lib/server/db/secret-tokens.ts). It lasts 7 days.

export { INVITATION_TTL_MS };

export type InvitationState = "pending" | "used" | "revoked" | "expired";

export interface InvitationView {
  id: string;
  teamId: string;
  email: string;
  role: Role;
  invitedBy: { id: string; name: string; email: string } | null;
  createdAt: Date;
  expiresAt: Date;
  lastSentAt: Date | null;
  acceptedAt: Date | null;
  revokedAt: Date | null;
  state: InvitationState;
}

const COLUMNS = [
  "invitations.id",
  "invitations.team_id",
  "invitations.email",
  "invitations.role",
  "invitations.invited_by",
  "invitations.created_at",
  "invitations.expires_at",
  "invitations.accepted_at",
  "invitations.revoked_at",
  "invitations.last_sent_at",
  "users.name as inviter_name",
  "users.email as inviter_email",
] as const;

interface Row {
  id: string;
  team_id: string;
  email: string;
  role: string;
  invited_by: string | null;
  created_at: number | string;
  expires_at: number | string;
  accepted_at: number | string | null;
  revoked_at: number | string | null;
  last_sent_at: number | string | null;
  inviter_name: string | null;
  inviter_email: string | null;
}

const dateOrNull = (v: number | string | null) => (v === null ? null : new Date(Number(v)));

function stateOf(r: Row, now: number): InvitationState {
  if (r.accepted_at !== null) return "used";
  if (r.revoked_at !== null) return "revoked";
  if (Number(r.expires_at) <= now) return "expired";
  return "pending";
}

function toView(r: Row, now: number): InvitationView {
  return {
    id: r.id,
    teamId: r.team_id,
    email: r.email,
    role: r.role as Role,
    invitedBy:
      r.invited_by === null ? null : { id: r.invited_by, name: r.inviter_name ?? "", email: r.inviter_email ?? "" },
    createdAt: new Date(Number(r.created_at)),
    expiresAt: new Date(Number(r.expires_at)),
    lastSentAt: dateOrNull(r.last_sent_at),
    acceptedAt: dateOrNull(r.accepted_at),
    revokedAt: dateOrNull(r.revoked_at),
    state: stateOf(r, now),
  };
}

const base = (db: Db) =>
  db.selectFrom("invitations").leftJoin("users", "users.id", "invitations.invited_by").select(COLUMNS);

/** A team's pending invitations (not accepted, revoked or expired), newest first. */
export async function listTeamInvitations(db: Db, teamId: string, now = Date.now()): Promise<InvitationView[]> {
  const rows = (await base(db)
    .where("invitations.team_id", "=", teamId)
    .where("invitations.accepted_at", "is", null)
    .where("invitations.revoked_at", "is", null)
    .where("invitations.expires_at", ">", now)
    .orderBy("invitations.created_at", "desc")
    .execute()) as Row[];
  return rows.map((r) => toView(r, now));
}

/** One invitation of a team (any state), or null. */
export async function getTeamInvitation(
  db: Db,
  teamId: string,
  id: string,
  now = Date.now(),
): Promise<InvitationView | null> {
  const row = (await base(db)
    .where("invitations.team_id", "=", teamId)
    .where("invitations.id", "=", id)
    .executeTakeFirst()) as Row | undefined;
  return row ? toView(row, now) : null;
}

/** The pending invitations sent to an address, with their team's name: what a signed-in user is shown. */
export async function listInvitationsForEmail(
  db: Db,
  email: string,
  now = Date.now(),
): Promise<Array<InvitationView & { team: { id: string; name: string; slug: string } }>> {
  const rows = (await base(db)
    .innerJoin("teams", "teams.id", "invitations.team_id")
    .select(["teams.name as team_name", "teams.slug as team_slug"])
    .where("invitations.email_normalized", "=", normalizeEmail(email))
    .where("invitations.accepted_at", "is", null)
    .where("invitations.revoked_at", "is", null)
    .where("invitations.expires_at", ">", now)
    .orderBy("invitations.created_at", "desc")
    .execute()) as Array<Row & { team_name: string; team_slug: string }>;
  return rows.map((r) => ({ ...toView(r, now), team: { id: r.team_id, name: r.team_name, slug: r.team_slug } }));
}

/** An invitation by the token of its link, in any state, or null when no invitation has that token. */
export async function findInvitationByToken(db: Db, token: string, now = Date.now()): Promise<InvitationView | null> {
  const hash = secretTokenHash(token);
  if (!hash) return null;
  const row = (await base(db).where("invitations.token_hash", "=", hash).executeTakeFirst()) as Row | undefined;
  return row ? toView(row, now) : null;
}

/** The 410 for a link that no longer works, saying which way it ended and what to do. */
export function endedError(state: Exclude<InvitationState, "pending">): AppError {
  switch (state) {
    case "used":
      return new AppError(
        "invitation_used",
        "This invitation was already used. Sign in with the account that accepted it, or ask the team for a new invitation.",
      );
    case "revoked":
      return new AppError(
        "invitation_revoked",
        "This invitation was withdrawn or replaced by a newer one. Use the latest link you received, or ask the team for a new one.",
      );
    case "expired":
      return new AppError(
        "invitation_expired",
        "This invitation has expired (links last 7 days). Ask the team's owner or an admin to send a new one.",
      );
  }
}

const notFound = () =>
  new AppError(
    "not_found",
    "This invitation link is not valid. Check that you copied all of it, or ask for a new one.",
  );

/** The pending invitation behind a link, or the error that says why it does not work. */
export async function pendingByToken(db: Db, token: string, now = Date.now()): Promise<InvitationView> {
  const inv = await findInvitationByToken(db, token, now);
  if (!inv) throw notFound();
  if (inv.state !== "pending") throw endedError(inv.state);
  return inv;
}

/** The link a token is opened with. */
export function invitationLink(origin: string, token: string): string {
  return `${origin.replace(/\/+$/, "")}/invite/${token}`;
}

export interface Inviter {
  userId: string;
  role: TeamRole;
  name: string;
  email: string;
}

export interface IssuedInvitation {
  invitation: InvitationView;
  /** The link, shown once to the inviter: it is not stored and cannot be shown again. */
  link: string;
  mailed: boolean;
  /** Why it was not mailed (not configured, or the SMTP server refused), when it was not. */
  mailError: string | null;
  /** Pending invitations to the same address this one replaced (revoked). */
  replaced: string[];
}

async function mailInvitation(
  inv: { email: string; role: string },
  teamName: string,
  inviter: Inviter,
  link: string,
  expiresAt: Date,
): Promise<{ mailed: boolean; mailError: string | null }> {
  const who = inviter.name ? `${inviter.name} (${inviter.email})` : inviter.email;
  const outcome = await sendMail({
    to: inv.email,
    subject: `${who} invited you to ${teamName} on Baton`,
    text:
      `${who} invited you to join the team "${teamName}" on Baton as ${inv.role}.\n\n` +
      `Accept the invitation:\n${link}\n\n` +
      `The link works once and expires on ${expiresAt.toUTCString()}. If you did not expect it, ignore this mail.\n`,
  });
  if (outcome.sent) return { mailed: true, mailError: null };
  return {
    mailed: false,
    mailError:
      outcome.reason === "not_configured"
        ? "Mail is not configured on this Baton server (BATON_SMTP_URL): pass the link on yourself."
        : "The mail server did not take the message: pass the link on yourself.",
  };
}

/** Revokes every pending invitation to `email` in the team; returns their ids. */
async function revokePendingTo(db: Db, teamId: string, email: string, now: number): Promise<string[]> {
  const pending = await db
    .selectFrom("invitations")
    .select("id")
    .where("team_id", "=", teamId)
    .where("email_normalized", "=", normalizeEmail(email))
    .where("accepted_at", "is", null)
    .where("revoked_at", "is", null)
    .execute();
  if (pending.length === 0) return [];
  const ids = pending.map((p) => p.id);
  await db.updateTable("invitations").set({ revoked_at: now }).where("id", "in", ids).execute();
  return ids;
}

function checkInvite(inviter: Inviter, role: TeamRole): void {
  const refusal = canInvite(inviter.role, role);
  if (refusal)
    throw new AppError(
      refusal.code === "not_allowed" || refusal.code === "self" ? "forbidden" : refusal.code,
      refusal.detail,
    );
}

/**
 * Invites `email` to the team as `role`. Refused above the inviter's own role (403
 * role_above_own / owner_only) and for someone already in the team (409 already_member). A pending
 * invitation to the same address is replaced: its link stops working.
 */
export async function inviteMember(
  db: Db,
  input: { teamId: string; inviter: Inviter; email: string; role: TeamRole; origin: string; now?: number },
): Promise<IssuedInvitation> {
  const now = input.now ?? Date.now();
  checkInvite(input.inviter, input.role);
  const team = await getTeam(db, input.teamId);
  if (!team) throw notFound();
  const existing = await findUserByEmail(db, input.email);
  if (existing) {
    const member = await db
      .selectFrom("memberships")
      .select(["role", "disabled_at"])
      .where("team_id", "=", input.teamId)
      .where("user_id", "=", existing.id)
      .executeTakeFirst();
    if (member)
      throw new AppError(
        "already_member",
        member.disabled_at === null
          ? `${existing.email} is already a member of ${team.name} (${member.role}). Change their role in the members list instead.`
          : `${existing.email} is a disabled member of ${team.name}. Enable them in the members list instead.`,
      );
  }
  const { replaced, created } = await db.transaction().execute(async (trx) => {
    const replaced = await revokePendingTo(trx, input.teamId, input.email, now);
    const created = await createInvitation(trx, {
      teamId: input.teamId,
      email: input.email,
      role: input.role,
      invitedBy: input.inviter.userId,
      now,
    });
    await trx.updateTable("invitations").set({ last_sent_at: now }).where("id", "=", created.invitation.id).execute();
    return { replaced, created };
  });
  const invitation = (await getTeamInvitation(db, input.teamId, created.invitation.id, now))!;
  const link = invitationLink(input.origin, created.token);
  const mail = await mailInvitation(invitation, team.name, input.inviter, link, invitation.expiresAt);
  return { invitation, link, ...mail, replaced };
}

/**
 * Sends a pending (or expired) invitation again with a new link and a new 7-day term: the old row
 * is revoked (its link answers "replaced") and a new one is made, with the same address and role.
 */
export async function resendInvitation(
  db: Db,
  input: { teamId: string; id: string; inviter: Inviter; origin: string; now?: number },
): Promise<IssuedInvitation> {
  const now = input.now ?? Date.now();
  const inv = await getTeamInvitation(db, input.teamId, input.id, now);
  if (!inv) throw new AppError("not_found", "There is no such invitation in this team.");
  if (inv.state === "used" || inv.state === "revoked") throw endedError(inv.state);
  return inviteMember(db, {
    teamId: input.teamId,
    inviter: input.inviter,
    email: inv.email,
    role: inv.role,
    origin: input.origin,
    now,
  });
}

/** Withdraws a pending invitation: its link then says so. Only for roles the actor may invite. */
export async function revokeInvitation(
  db: Db,
  input: { teamId: string; id: string; actor: Inviter; now?: number },
): Promise<InvitationView> {
  const now = input.now ?? Date.now();
  const inv = await getTeamInvitation(db, input.teamId, input.id, now);
  if (!inv) throw new AppError("not_found", "There is no such invitation in this team.");
  checkInvite(input.actor, inv.role);
  if (inv.state === "used") throw endedError("used");
  if (inv.state !== "revoked")
    await db
      .updateTable("invitations")
      .set({ revoked_at: now })
      .where("id", "=", inv.id)
      .where("revoked_at", "is", null)
      .execute();
  return (await getTeamInvitation(db, input.teamId, input.id, now))!;
}

/** What the invitation page shows for a link (no secret in it). */
export interface InvitationLookup {
  state: InvitationState;
  email: string;
  role: Role;
  team: { name: string };
  invitedBy: string | null;
  expiresAt: Date;
  /** Whether an account with the invited address exists (then: sign in and accept). */
  accountExists: boolean;
}

export async function lookupInvitation(db: Db, token: string, now = Date.now()): Promise<InvitationLookup> {
  const inv = await findInvitationByToken(db, token, now);
  if (!inv) throw notFound();
  const team = await getTeam(db, inv.teamId);
  if (!team) throw notFound();
  return {
    state: inv.state,
    email: inv.email,
    role: inv.role,
    team: { name: team.name },
    invitedBy: inv.invitedBy ? inv.invitedBy.name || inv.invitedBy.email : null,
    expiresAt: inv.expiresAt,
    accountExists: (await findUserByEmail(db, inv.email)) !== null,
  };
}

async function audit(db: Db, input: Parameters<typeof recordAudit>[1]): Promise<void> {
  try {
    await recordAudit(db, input);
  } catch (err) {
    console.error("[baton] could not record an audit event:", err);
  }
}

/** Accepts by link for a signed-in user whose address is the invited one. */
export async function acceptByToken(
  db: Db,
  input: { token: string; user: User; ip: string | null; now?: number },
): Promise<{ teamId: string; role: Role }> {
  const now = input.now ?? Date.now();
  const inv = await pendingByToken(db, input.token, now);
  if (normalizeEmail(inv.email) !== normalizeEmail(input.user.email))
    throw new AppError(
      "invitation_email_mismatch",
      `This invitation was sent to ${inv.email}, but you are signed in as ${input.user.email}. Sign out and sign in as ${inv.email}.`,
    );
  const m = await acceptOrExplain(db, () => acceptInvitation(db, { token: input.token, user: input.user, now }), inv);
  await audit(db, {
    action: "invitation.accept",
    userId: input.user.id,
    teamId: m.teamId,
    target: inv.id,
    ip: input.ip,
    data: { before: null, after: { user_id: input.user.id, role: m.role } },
  });
  return { teamId: m.teamId, role: m.role };
}

/** Accepts by id for a signed-in user (the console's own list of their invitations). */
export async function acceptById(
  db: Db,
  input: { id: string; user: User; ip: string | null; now?: number },
): Promise<{ teamId: string; role: Role }> {
  const now = input.now ?? Date.now();
  const inv = await ownInvitation(db, input.id, input.user, now);
  const m = await db.transaction().execute(async (trx) => {
    const used = await trx
      .updateTable("invitations")
      .set({ accepted_at: now })
      .where("id", "=", inv.id)
      .where("accepted_at", "is", null)
      .where("revoked_at", "is", null)
      .where("expires_at", ">", now)
      .executeTakeFirst();
    if (used.numUpdatedRows === 0n) {
      // Used, revoked or expired since it was read: say which.
      const again = await getTeamInvitation(trx, inv.teamId, inv.id, now);
      throw endedError(again && again.state !== "pending" ? again.state : "used");
    }
    await trx
      .insertInto("memberships")
      .values({ team_id: inv.teamId, user_id: input.user.id, role: inv.role, created_at: now })
      .onConflict((oc) => oc.columns(["team_id", "user_id"]).doNothing())
      .execute();
    return { teamId: inv.teamId, role: inv.role };
  });
  forgetRemembered();
  await audit(db, {
    action: "invitation.accept",
    userId: input.user.id,
    teamId: m.teamId,
    target: inv.id,
    ip: input.ip,
    data: { before: null, after: { user_id: input.user.id, role: m.role } },
  });
  return m;
}

/** Declines one of the signed-in user's pending invitations (it is revoked). */
export async function declineById(
  db: Db,
  input: { id: string; user: User; ip: string | null; now?: number },
): Promise<void> {
  const now = input.now ?? Date.now();
  const inv = await ownInvitation(db, input.id, input.user, now);
  await db.updateTable("invitations").set({ revoked_at: now }).where("id", "=", inv.id).execute();
  await audit(db, {
    action: "invitation.decline",
    userId: input.user.id,
    teamId: inv.teamId,
    target: inv.id,
    ip: input.ip,
    data: { before: { state: "pending" }, after: { state: "revoked" } },
  });
}

/** One pending invitation addressed to the user; anyone else's, or an unknown id, is a 404. */
async function ownInvitation(db: Db, id: string, user: User, now: number): Promise<InvitationView> {
  const row = (await base(db)
    .where("invitations.id", "=", id)
    .where("invitations.email_normalized", "=", normalizeEmail(user.email))
    .executeTakeFirst()) as Row | undefined;
  if (!row) throw new AppError("not_found", "There is no such invitation for you.");
  const inv = toView(row, now);
  if (inv.state !== "pending") throw endedError(inv.state);
  return inv;
}

async function acceptOrExplain<T>(db: Db, accept: () => Promise<T>, inv: InvitationView): Promise<T> {
  try {
    return await accept();
  } catch (err) {
    // Used, revoked or expired between the check and the write: say which.
    const again = await getTeamInvitation(db, inv.teamId, inv.id);
    if (again && again.state !== "pending") throw endedError(again.state);
    throw err;
  }
}

/**
 * A new person accepts: their account is made with the invited address, their name and password,
 * and the membership added, in one transaction. When an account with the address exists already,
 * 409 account_exists: they sign in and accept.
 */
export async function acceptAsNewUser(
  db: Db,
  input: { token: string; name: string; password: string; ip: string | null; now?: number },
): Promise<{ user: User; teamId: string; role: Role }> {
  const now = input.now ?? Date.now();
  const inv = await pendingByToken(db, input.token, now);
  const accountExists = () =>
    new AppError(
      "account_exists",
      `There is already a Baton account for ${inv.email}. Sign in with it, then accept the invitation.`,
    );
  if (await findUserByEmail(db, inv.email)) throw accountExists();
  const passwordHash = await hashPassword(input.password);
  let result: { user: User; teamId: string; role: Role };
  try {
    result = await db.transaction().execute(async (trx) => {
      const user = await createUser(trx, { email: inv.email, name: input.name, passwordHash, now });
      const m = await acceptInvitation(trx, { token: input.token, user, now });
      return { user, teamId: m.teamId, role: m.role };
    });
  } catch (err) {
    if (err instanceof DbConflictError && err.code === "email_taken") throw accountExists();
    const again = await getTeamInvitation(db, inv.teamId, inv.id);
    if (again && again.state !== "pending") throw endedError(again.state);
    throw err;
  }
  forgetRemembered();
  await audit(db, {
    action: "invitation.accept",
    userId: result.user.id,
    teamId: result.teamId,
    target: inv.id,
    ip: input.ip,
    data: { before: null, after: { user_id: result.user.id, role: result.role, new_account: true } },
  });
  return result;
}
