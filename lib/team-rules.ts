// The rules of a team's membership, as pure functions: the server enforces them (lib/server/members.ts,
// lib/server/invitations.ts) and the /team page uses the same ones to offer only what is allowed, or to
// say why a control is disabled. Each answer is null (allowed) or the sentence the user reads, with
// what to do instead.

export const TEAM_ROLES = ["owner", "admin", "member", "viewer"] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

const RANK: Record<TeamRole, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

/** Whether `a` is at least as strong as `b`. */
export const atLeast = (a: TeamRole, b: TeamRole): boolean => RANK[a] >= RANK[b];

/** The code of a refusal: the HTTP status is chosen by the server (lib/server/members.ts). */
export type RuleCode = "last_owner" | "role_above_own" | "owner_only" | "not_allowed" | "self";

export interface RuleRefusal {
  code: RuleCode;
  detail: string;
}

const refuse = (code: RuleCode, detail: string): RuleRefusal => ({ code, detail });

/** The roles `actor` may give (in an invitation or a role change): at most their own; owner only by owners. */
export function assignableRoles(actor: TeamRole): TeamRole[] {
  return TEAM_ROLES.filter((r) => atLeast(actor, r));
}

/** May `actor` invite someone as `role`? Nobody invites above their own role. */
export function canInvite(actor: TeamRole, role: TeamRole): RuleRefusal | null {
  if (!atLeast(actor, "admin")) return refuse("not_allowed", "Only owners and admins invite people.");
  if (role === "owner" && actor !== "owner")
    return refuse("owner_only", "Only an owner can invite another owner. Invite them as admin, or ask an owner.");
  if (!atLeast(actor, role))
    return refuse("role_above_own", `You are ${actor}: you cannot invite someone as ${role}, above your own role.`);
  return null;
}

export interface TeamFacts {
  /** Owners of the team whose membership is not disabled. */
  activeOwners: number;
}

/**
 * May `actor` (their role) change `target`'s role from `from` to `to`? Admins manage admins and
 * below; only owners make, demote or remove owners; the last owner cannot be demoted.
 */
export function canChangeRole(
  actor: TeamRole,
  target: { role: TeamRole; self: boolean },
  to: TeamRole,
  facts: TeamFacts,
): RuleRefusal | null {
  if (!atLeast(actor, "admin")) return refuse("not_allowed", "Only owners and admins change roles.");
  if (target.role === to) return null;
  if ((to === "owner" || target.role === "owner") && actor !== "owner")
    return refuse("owner_only", "Only an owner can make someone owner or change an owner's role.");
  if (!atLeast(actor, to))
    return refuse("role_above_own", `You are ${actor}: you cannot give the role ${to}, above your own.`);
  if (!atLeast(actor, target.role))
    return refuse("role_above_own", `You are ${actor}: you cannot change the role of a ${target.role}.`);
  if (target.role === "owner" && facts.activeOwners <= 1)
    return refuse(
      "last_owner",
      target.self
        ? "You are the last owner of this team. Transfer ownership to another member first, then change your role."
        : "This is the team's last owner. Make another member owner first (Transfer ownership).",
    );
  return null;
}

/** May `actor` remove `target` from the team? (Leaving is canLeave.) */
export function canRemove(actor: TeamRole, target: { role: TeamRole; self: boolean }, facts: TeamFacts) {
  if (target.self) return refuse("self", "To leave the team yourself, use Leave team.");
  if (!atLeast(actor, "admin")) return refuse("not_allowed", "Only owners and admins remove members.");
  if (target.role === "owner" && actor !== "owner") return refuse("owner_only", "Only an owner can remove an owner.");
  if (!atLeast(actor, target.role))
    return refuse("role_above_own", `You are ${actor}: you cannot remove a ${target.role}.`);
  if (target.role === "owner" && facts.activeOwners <= 1)
    return refuse("last_owner", "This is the team's last owner. Transfer ownership first.");
  return null;
}

/** May `actor` disable (suspend) or enable `target` in the team, unlock their sign-in, or end their sessions? */
export function canAdminister(
  actor: TeamRole,
  target: { role: TeamRole; self: boolean },
  facts: TeamFacts & { disabling?: boolean },
): RuleRefusal | null {
  if (target.self && facts.disabling)
    return refuse("self", "You cannot disable yourself. Ask another owner or admin, or leave the team.");
  if (!atLeast(actor, "admin")) return refuse("not_allowed", "Only owners and admins manage people.");
  if (!target.self && target.role === "owner" && actor !== "owner")
    return refuse("owner_only", "Only an owner can manage another owner.");
  if (!atLeast(actor, target.role))
    return refuse("role_above_own", `You are ${actor}: you cannot manage a ${target.role}.`);
  if (facts.disabling && target.role === "owner" && facts.activeOwners <= 1)
    return refuse("last_owner", "This is the team's last owner. Transfer ownership first.");
  return null;
}

/** May a member with `role` leave the team? The last owner cannot. */
export function canLeave(role: TeamRole, facts: TeamFacts): RuleRefusal | null {
  if (role === "owner" && facts.activeOwners <= 1)
    return refuse(
      "last_owner",
      "You are the last owner of this team. Transfer ownership to another member first, then leave.",
    );
  return null;
}

/** May `actor` transfer ownership to `target`? Owners only, to another active member. */
export function canTransferOwnership(actor: TeamRole, target: { self: boolean; disabled: boolean }) {
  if (actor !== "owner") return refuse("owner_only", "Only an owner can transfer ownership.");
  if (target.self) return refuse("self", "You already are an owner. Choose another member.");
  if (target.disabled) return refuse("not_allowed", "This member is disabled. Enable them first.");
  return null;
}

/** Why roles can't be changed in Baton while the team's SSO syncs them from the IdP's groups. */
export const ROLES_SYNCED_DETAIL =
  "Roles follow the identity provider's groups while SSO group sync is on: change the member's groups at the IdP (or turn group sync off in Single sign-on).";
