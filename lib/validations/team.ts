import { z } from "zod";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "./auth";

// Baton's /api/team (members, invitations) and /api/invitations: inputs, shared by the route
// handlers, and the DTOs the browser gets (types only on the browser side: lib/api/core.ts).

export const RoleInput = z.enum(["owner", "admin", "member", "viewer"], {
  error: "must be one of owner, admin, member, viewer",
});

const Email = z
  .string()
  .trim()
  .min(1, { error: "is required" })
  .max(254, { error: "must be at most 254 characters" })
  .pipe(z.email({ error: "is not a valid email address" }));

const Id = z.string().min(1).max(100);

export const MemberParams = z.object({ userId: Id });
export const MemberSessionParams = z.object({ userId: Id, sessionId: z.string().min(1).max(128) });
export const InvitationParams = z.object({ id: Id });

export const ChangeRoleBody = z.object({ role: RoleInput });
export const TransferOwnershipBody = z.object({
  user_id: Id,
  /** Stay an owner too (default: the acting owner becomes admin). */
  stay_owner: z.boolean().optional(),
});
/** Leaving names the team, so that a stray request cannot make someone leave the team they act in. */
export const LeaveBody = z.object({ team_id: Id });
export const InviteBody = z.object({ email: Email, role: RoleInput });

/** An invitation link's token: 32 random bytes, base64url. */
const Token = z.string().min(1, { error: "is required" }).max(200, { error: "is not an invitation token" });
export const LookupInvitationBody = z.object({ token: Token });
export const AcceptInvitationBody = z.object({
  token: Token,
  /** A new person's account (when not signed in): their name and a password. */
  name: z
    .string()
    .trim()
    .min(1, { error: "is required" })
    .max(100, { error: "must be at most 100 characters" })
    .optional(),
  password: z
    .string()
    .min(PASSWORD_MIN_LENGTH, { error: `must be at least ${PASSWORD_MIN_LENGTH} characters` })
    .max(PASSWORD_MAX_LENGTH, { error: `must be at most ${PASSWORD_MAX_LENGTH} characters` })
    .optional(),
});

export type Role = z.infer<typeof RoleInput>;

export interface MemberDto {
  user_id: string;
  email: string;
  name: string;
  role: Role;
  joined_at: string;
  disabled: boolean;
  account_disabled: boolean;
  sign_in_method: "password" | "sso";
  last_active_at: string | null;
  active_sessions: number;
  locked_until: string | null;
  /** Sandboxes they created that still exist (null when the team's orkestr API could not be asked). */
  sandbox_count: number | null;
  /** The sandbox list filtered by this creator. */
  sandboxes_href: string;
  is_you: boolean;
}

export interface MemberListDto {
  members: MemberDto[];
  team: { id: string; name: string; slug: string };
  your_role: Role;
  /** The team's SSO syncs roles from the IdP's groups: roles are read-only here (changed at the IdP). */
  roles_synced: boolean;
}

export interface SessionDto {
  id: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
}

export interface InvitationDto {
  id: string;
  email: string;
  role: Role;
  invited_by: { id: string; name: string; email: string } | null;
  created_at: string;
  expires_at: string;
  last_sent_at: string | null;
  state: "pending" | "used" | "revoked" | "expired";
}

export interface IssuedInvitationDto {
  invitation: InvitationDto;
  /** Shown once: not stored, cannot be shown again. */
  link: string;
  mailed: boolean;
  mail_error: string | null;
  replaced: string[];
}

export interface MyInvitationDto extends InvitationDto {
  team: { id: string; name: string; slug: string };
}

export interface InvitationLookupDto {
  state: "pending" | "used" | "revoked" | "expired";
  email: string;
  role: Role;
  team: { name: string };
  invited_by: string | null;
  expires_at: string;
  account_exists: boolean;
  /** The signed-in user's address, when someone is signed in. */
  signed_in_as: string | null;
}
