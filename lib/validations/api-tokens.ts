import { z } from "zod";
import {
  EXPIRY_DAYS,
  MAX_TOKEN_NAME,
  TOKEN_CAP_MICRO,
  TOKEN_CONCURRENCY,
  TOKEN_SCOPES,
  type TokenScope,
} from "../api-tokens/scope";

// /api/tokens (personal API tokens, issue 23): the inputs, shared by the route handlers, and the
// DTOs the browser gets.

export const CreateApiTokenBody = z.object({
  name: z
    .string()
    .trim()
    .min(1, { error: "is required" })
    .max(MAX_TOKEN_NAME, { error: `must be at most ${MAX_TOKEN_NAME} characters` }),
  scope: z.enum(TOKEN_SCOPES, { error: "must be read or write" }),
  /** Days until it expires; null: never (admins and owners only). Default 90. */
  expires_in_days: z
    .union(EXPIRY_DAYS.map((d) => z.literal(d)) as unknown as [z.ZodLiteral<number>, z.ZodLiteral<null>], {
      error: `must be one of ${EXPIRY_DAYS.map((d) => d ?? "null").join(", ")}`,
    })
    .optional(),
  /** The token's own monthly spend cap, whole micro-euros in whole cents (as the spend caps); null or absent: none. */
  spend_cap_micro: z
    .number({ error: "must be a whole number of micro-euros" })
    .int({ error: "must be a whole number of micro-euros" })
    .min(TOKEN_CAP_MICRO.min, { error: "must be at least EUR 0.01" })
    .max(TOKEN_CAP_MICRO.max, { error: "must be at most EUR 1,000,000" })
    .refine((n) => n % TOKEN_CAP_MICRO.step === 0, { error: "must be whole cents (a multiple of 10,000 micro-euros)" })
    .nullable()
    .optional(),
  /** The most sandboxes made with the token that may exist at once (1–100); null or absent: no limit. */
  max_concurrent_sandboxes: z
    .number({ error: "must be a whole number" })
    .int({ error: "must be a whole number" })
    .min(TOKEN_CONCURRENCY.min, { error: `must be at least ${TOKEN_CONCURRENCY.min}` })
    .max(TOKEN_CONCURRENCY.max, { error: `must be at most ${TOKEN_CONCURRENCY.max}` })
    .nullable()
    .optional(),
});

export const ApiTokenParams = z.object({ id: z.string().min(1).max(100) });

export interface ApiTokenDto {
  id: string;
  name: string;
  /** "bat_…abcd" */
  hint: string;
  scope: TokenScope;
  created_at: string;
  /** Null: never expires. */
  expires_at: string | null;
  last_used_at: string | null;
  last_used_ip: string | null;
  revoked_at: string | null;
  /** "revoked" (by a person), "member_removed", "member_left", "member_disabled", "account_disabled", "role_changed". */
  revoked_reason: string | null;
  /** Its own monthly spend cap, whole micro-euros; null: none. */
  spend_cap_micro: number | null;
  /** The most sandboxes made with it that may exist at once; null: no limit. */
  max_concurrent_sandboxes: number | null;
  owner: { id: string; name: string; email: string };
  /** The token is the signed-in user's own. */
  mine: boolean;
}

export interface ApiTokensView {
  tokens: ApiTokenDto[];
  /** The user sees and may revoke every token of the team (admins and owners). */
  manages_all: boolean;
  /** The scopes the user may give a new token. */
  scopes: TokenScope[];
  /** The user may make a token that never expires. */
  may_never_expire: boolean;
  /**
   * The team's SSO session maximum when it limits the user's tokens: they stop working this many
   * hours after the user's last SSO sign-in into the team (a new one renews them). Null: no such limit.
   */
  sso_session_max_hours: number | null;
}

export interface CreatedApiTokenDto {
  /** The token itself: in this answer only, never again. */
  token: string;
  api_token: ApiTokenDto;
}
