import { z } from "zod";

// Inputs of the sign-in and first-run endpoints, shared by the route handlers and (for the limits)
// the forms. Messages are phrased to follow the field's name: "Password: must be at least 12
// characters."

import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../password-policy";

export { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH };

const Email = z
  .string()
  .trim()
  .min(1, { error: "is required" })
  .max(254, { error: "must be at most 254 characters" })
  .pipe(z.email({ error: "is not a valid email address" }));

export const LoginBody = z.object({
  email: Email,
  // Not checked against the length policy: the policy may change, old passwords must still work.
  password: z
    .string()
    .min(1, { error: "is required" })
    .max(PASSWORD_MAX_LENGTH, { error: `must be at most ${PASSWORD_MAX_LENGTH} characters` }),
});
export type LoginBody = z.infer<typeof LoginBody>;

const Name = z.string().trim().min(1, { error: "is required" }).max(100, { error: "must be at most 100 characters" });

export const SetupBody = z.object({
  name: Name,
  email: Email,
  password: z
    .string()
    .min(PASSWORD_MIN_LENGTH, { error: `must be at least ${PASSWORD_MIN_LENGTH} characters` })
    .max(PASSWORD_MAX_LENGTH, { error: `must be at most ${PASSWORD_MAX_LENGTH} characters` }),
  team_name: Name,
  /** The first-run setup code from the server's log (lib/server/setup-code.ts); checked by the handler. */
  setup_code: z.string().max(64, { error: "must be at most 64 characters" }).optional(),
});
export type SetupBody = z.infer<typeof SetupBody>;
