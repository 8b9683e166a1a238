import { z } from "zod";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "./auth";

// Inputs of "Your account" (/api/me/*), the second sign-in step and the team settings (/api/team).
// The browser imports only the types and the limits from here: zod stays on the server.

const Code = z.string().trim().min(1, { error: "is required" }).max(32, { error: "must be at most 32 characters" });

/** A 6-digit code from the authenticator app, or a recovery code. */
export const SecondFactorBody = z.object({ code: Code });
/** A 6-digit code from the authenticator app (enrolment, new recovery codes). */
export const TotpCodeBody = z.object({
  code: z
    .string()
    .trim()
    .regex(/^\d{6}$/, { error: "must be the 6 digits your authenticator app shows" }),
});

/** Turning the second factor off: the password, or a current code (accounts without a password). */
export const DisableTotpBody = z
  .object({
    password: z.string().max(PASSWORD_MAX_LENGTH).optional(),
    code: Code.optional(),
  })
  .refine((b) => (b.password ?? "") !== "" || (b.code ?? "") !== "", {
    error: "Enter your password or a code from your authenticator app.",
  });

export const ProfileBody = z.object({
  name: z.string().trim().min(1, { error: "is required" }).max(100, { error: "must be at most 100 characters" }),
});

export const PasswordChangeBody = z.object({
  current_password: z
    .string()
    .min(1, { error: "is required" })
    .max(PASSWORD_MAX_LENGTH, { error: `must be at most ${PASSWORD_MAX_LENGTH} characters` }),
  new_password: z
    .string()
    .min(PASSWORD_MIN_LENGTH, { error: `must be at least ${PASSWORD_MIN_LENGTH} characters` })
    .max(PASSWORD_MAX_LENGTH, { error: `must be at most ${PASSWORD_MAX_LENGTH} characters` }),
});

export const SessionParams = z.object({ id: z.string().regex(/^[0-9a-f]{64}$/, { error: "is not a session id" }) });

export const TEAM_SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$/;
export const TeamPatchBody = z
  .object({
    name: z.string().trim().min(1, { error: "is required" }).max(100, { error: "must be at most 100 characters" }),
    slug: z.string().trim().toLowerCase().regex(TEAM_SLUG_PATTERN, {
      error: "must be 1 to 48 lowercase letters, digits and dashes, starting and ending with a letter or digit",
    }),
    /** Whether the team's admins may set spend caps and prices (owners only). */
    admins_manage_billing: z.boolean({ error: "must be true or false" }),
  })
  .partial()
  .refine((b) => b.name !== undefined || b.slug !== undefined || b.admins_manage_billing !== undefined, {
    error: "Give a new name or slug, or say whether admins manage billing.",
  });

export const TEAM_DELETE_SANDBOXES = ["terminate", "leave"] as const;
export const TeamDeleteBody = z.object({
  /** The team's slug, typed by the owner. */
  confirm: z.string().trim().max(100),
  /** What happens to the team's sandboxes on its engine connection. */
  sandboxes: z.enum(TEAM_DELETE_SANDBOXES, { error: "must be terminate or leave" }),
});

// ---------------------------------------------------------------------------------------------
// Answers (the browser's types)

export interface SessionDto {
  id: string;
  current: boolean;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  ip: string | null;
  user_agent: string | null;
}

export interface SecurityDto {
  has_password: boolean;
  totp: { enabled: boolean; confirmed_at: string | null; enrolling: boolean; recovery_codes_left: number };
  sessions: number;
}

export interface TotpEnrolmentDto {
  secret: string;
  otpauth_uri: string;
  qr_data_url: string;
}

export interface TeamDto {
  team: { id: string; name: string; slug: string; created_at: string };
  role: string;
  can_manage: boolean;
  can_delete: boolean;
  /** The owners let admins set spend caps and prices. */
  admins_manage_billing: boolean;
  /** This user may set spend caps and prices (billing.manage, delegation included). */
  can_manage_billing: boolean;
  /** This user may change admins_manage_billing (owners). */
  can_delegate_billing: boolean;
}
