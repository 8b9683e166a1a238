import { z } from "zod";

// Baton's /api/connections: inputs (shared by the route handlers and the forms) and the DTOs the
// browser gets. A DTO never carries a token: only its hint ("ork_…abcd").

const NameInput = z.string().max(200, { error: "must be at most 200 characters" });
const BaseUrlInput = z.string().max(2048, { error: "must be at most 2048 characters" });
// Messages never quote the input: it is a secret.
const TokenInput = z.string({ error: "is required" }).max(4096, { error: "is too long for an orkestr token" });

export const CreateConnectionBody = z.object({
  name: NameInput,
  base_url: BaseUrlInput,
  token: TokenInput,
  /** Make it the active connection (the first connection always is). */
  activate: z.boolean().optional(),
});
export type CreateConnectionBody = z.infer<typeof CreateConnectionBody>;

export const UpdateConnectionBody = z
  .object({
    token: TokenInput.optional(),
    active: z.literal(true, { error: "can only be true (make this connection the active one)" }).optional(),
  })
  .refine((b) => b.token !== undefined || b.active !== undefined, { error: "Send a new token, or active: true." });
export type UpdateConnectionBody = z.infer<typeof UpdateConnectionBody>;

export const ConnectionIdParams = z.object({ id: z.string().min(1).max(100) });

export const ConnectionDto = z.object({
  id: z.string(),
  name: z.string(),
  base_url: z.string(),
  /** "ork_…abcd" */
  token_hint: z.string(),
  is_active: z.boolean(),
  is_local_engine: z.boolean(),
  last_checked_at: z.string().nullable(),
  /** "code: detail" of the last failed check, null when it passed. */
  last_error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ConnectionDto = z.infer<typeof ConnectionDto>;

/**
 * A connection in the user's list, with the team it belongs to (null: no team of the user's, so it
 * is not used) and what the user's role in that team lets them do with it: the buttons the
 * Settings page offers are exactly what PATCH and DELETE /api/connections/{id} accept.
 */
export const ConnectionListItemDto = ConnectionDto.extend({
  team_name: z.string().nullable(),
  allowed: z.object({ activate: z.boolean(), replace_token: z.boolean(), remove: z.boolean() }),
});
export type ConnectionListItemDto = z.infer<typeof ConnectionListItemDto>;

export const ConnectionListDto = z.object({
  connections: z.array(ConnectionListItemDto),
  local_engine: z.object({ available: z.boolean(), origin: z.string(), reason: z.string().nullable() }),
});
export type ConnectionListDto = z.infer<typeof ConnectionListDto>;

export const ConnectionStatusDto = z.object({
  state: z.enum(["ok", "error", "none"]),
  connection: z
    .object({
      id: z.string(),
      name: z.string(),
      base_url: z.string(),
      host: z.string(),
      token_hint: z.string(),
      is_local_engine: z.boolean(),
    })
    .nullable(),
  /** Why it failed (state "error"), or a note (a warning on "ok"). */
  detail: z.string().nullable(),
  code: z.string().nullable(),
  checked_at: z.string(),
});
export type ConnectionStatusDto = z.infer<typeof ConnectionStatusDto>;

export { hostOf } from "../utils";
