import { z } from "zod";

// The SSO settings form's body (PUT /api/team/sso), shared by the route and the page's limits.

export const SSO_SESSION_HOURS = { min: 1, max: 720, default: 12 } as const;

const Text = (max: number) =>
  z
    .string()
    .trim()
    .max(max, { error: `must be at most ${max} characters` });

export const SsoConfigBody = z.object({
  issuer: Text(2048).min(1, { error: "is required" }),
  client_id: Text(512).min(1, { error: "is required" }),
  /** Left out: keep the stored secret; null: remove it; a string: replace it. Never sent back. */
  client_secret: z.string().max(4096).nullable().optional(),
  domains: z.array(Text(253).min(1)).max(50).default([]),
  default_role: z.enum(["member", "viewer"], { error: "must be member or viewer" }),
  group_claim: Text(100).nullable().default(null),
  group_role_map: z
    .array(z.object({ group: Text(256).min(1, { error: "is required" }), role: z.enum(["admin", "member", "viewer"]) }))
    .max(100)
    .default([]),
  allowed_groups: z.array(Text(256).min(1)).max(100).default([]),
  enforced: z.boolean().default(false),
  group_sync: z.boolean().default(false),
  session_max_hours: z
    .number()
    .int()
    .min(SSO_SESSION_HOURS.min, { error: `must be at least ${SSO_SESSION_HOURS.min} hour` })
    .max(SSO_SESSION_HOURS.max, { error: `must be at most ${SSO_SESSION_HOURS.max} hours (30 days)` })
    .default(SSO_SESSION_HOURS.default),
});
export type SsoConfigBody = z.infer<typeof SsoConfigBody>;

/** What GET /api/team/sso answers. */
export interface SsoSettings {
  config: {
    issuer: string;
    client_id: string;
    client_secret_set: boolean;
    default_role: "member" | "viewer";
    group_claim: string | null;
    group_role_map: Array<{ group: string; role: "admin" | "member" | "viewer" }>;
    allowed_groups: string[];
    enforced: boolean;
    group_sync: boolean;
    session_max_hours: number;
    tested_at: number | null;
    last_test: SsoTestResultView | null;
  } | null;
  domains: Array<{ domain: string; approved: boolean; approved_at: number | null }>;
  redirect_uri: string;
  is_instance_owner: boolean;
}

export interface SsoTestResultView {
  ok: boolean;
  at: number;
  email?: string;
  subject?: string;
  groups?: string[] | null;
  role?: string | null;
  code?: string;
  detail?: string;
}

export const ApproveDomainBody = z.object({ domain: Text(253).min(1, { error: "is required" }) });
