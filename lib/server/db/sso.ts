import "server-only";
import { z } from "zod";
import { decrypt, encrypt, sha256 } from "../crypto";
import { newId } from "../ids";
import type { Db } from "./index";
import { getSetting, setSetting } from "./settings";
import type { Role } from "./schema";
import { parseRow } from "./util";

// Repositories of per-team SSO (migration 0008_sso): a team's identity provider, the email domains
// it claims, the (issuer, subject) → user identities, and the single-use sign-in transactions.

export const SSO_DEFAULT_ROLES = ["member", "viewer"] as const;
export type SsoDefaultRole = (typeof SSO_DEFAULT_ROLES)[number];
/** Roles a group may map to: never owner (ownership is given by a person, not by an IdP). */
export const SSO_MAPPED_ROLES = ["admin", "member", "viewer"] as const;
export type SsoMappedRole = (typeof SSO_MAPPED_ROLES)[number];
export const SSO_SESSION_MAX_HOURS = { min: 1, max: 720, default: 12 } as const;

export interface GroupRoleRule {
  group: string;
  role: SsoMappedRole;
}

export interface SsoTestResult {
  ok: boolean;
  at: number;
  /** What the IdP said about the signed-in person (ok), or why it failed. */
  email?: string;
  subject?: string;
  groups?: string[] | null;
  role?: string | null;
  code?: string;
  detail?: string;
}

export interface SsoConfig {
  teamId: string;
  issuer: string;
  clientId: string;
  hasClientSecret: boolean;
  defaultRole: SsoDefaultRole;
  groupClaim: string | null;
  groupRoleMap: GroupRoleRule[];
  allowedGroups: string[];
  enforced: boolean;
  groupSync: boolean;
  sessionMaxHours: number;
  testedAt: number | null;
  lastTest: SsoTestResult | null;
  updatedAt: number;
}

export const clientSecretAad = (teamId: string) => `sso_configs:${teamId}:client_secret`;

const json = <T>(text: string | null, fallback: T): T => {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
};

const ConfigRow = z
  .object({
    team_id: z.string(),
    issuer: z.string(),
    client_id: z.string(),
    client_secret_ciphertext: z.string().nullable(),
    default_role: z.enum(SSO_DEFAULT_ROLES),
    group_claim: z.string().nullable(),
    group_role_map: z.string(),
    allowed_groups: z.string(),
    enforced: z.coerce.number(),
    group_sync: z.coerce.number(),
    session_max_hours: z.coerce.number(),
    tested_at: z.coerce.number().nullable(),
    last_test: z.string().nullable(),
    updated_at: z.coerce.number(),
  })
  .transform((r): SsoConfig & { secretCiphertext: string | null } => ({
    teamId: r.team_id,
    issuer: r.issuer,
    clientId: r.client_id,
    hasClientSecret: r.client_secret_ciphertext !== null,
    secretCiphertext: r.client_secret_ciphertext,
    defaultRole: r.default_role,
    groupClaim: r.group_claim,
    groupRoleMap: json<GroupRoleRule[]>(r.group_role_map, []),
    allowedGroups: json<string[]>(r.allowed_groups, []),
    enforced: r.enforced === 1,
    groupSync: r.group_sync === 1,
    sessionMaxHours: r.session_max_hours,
    testedAt: r.tested_at,
    lastTest: json<SsoTestResult | null>(r.last_test, null),
    updatedAt: r.updated_at,
  }));

const CONFIG_COLUMNS = [
  "team_id",
  "issuer",
  "client_id",
  "client_secret_ciphertext",
  "default_role",
  "group_claim",
  "group_role_map",
  "allowed_groups",
  "enforced",
  "group_sync",
  "session_max_hours",
  "tested_at",
  "last_test",
  "updated_at",
] as const;

async function configRow(db: Db, teamId: string) {
  const row = await db
    .selectFrom("sso_configs")
    .select(CONFIG_COLUMNS)
    .where("team_id", "=", teamId)
    .executeTakeFirst();
  return row ? parseRow("sso_configs", ConfigRow, row) : null;
}

/** A team's SSO configuration, without its secret (hasClientSecret says whether one is set). */
export async function getSsoConfig(db: Db, teamId: string): Promise<SsoConfig | null> {
  const row = await configRow(db, teamId);
  if (!row) return null;
  const { secretCiphertext: _omit, ...config } = row;
  void _omit;
  return config;
}

/** Whether any team on this instance has SSO configured: the login page offers "Sign in with SSO" only then. */
export async function anyTeamHasSso(db: Db): Promise<boolean> {
  const row = await db.selectFrom("sso_configs").select("team_id").limit(1).executeTakeFirst();
  return row !== undefined;
}

/** The decrypted client secret (server side only, for the token call), or null. */
export async function getSsoClientSecret(db: Db, teamId: string): Promise<string | null> {
  const row = await configRow(db, teamId);
  return row?.secretCiphertext ? decrypt(row.secretCiphertext, { aad: clientSecretAad(teamId) }) : null;
}

export interface SsoConfigInput {
  issuer: string;
  clientId: string;
  /** undefined: keep the stored one; null: remove it; a string: replace it. */
  clientSecret?: string | null;
  defaultRole: SsoDefaultRole;
  groupClaim: string | null;
  groupRoleMap: GroupRoleRule[];
  allowedGroups: string[];
  enforced: boolean;
  groupSync: boolean;
  sessionMaxHours: number;
}

/**
 * Creates or replaces a team's configuration. A change of issuer or client clears `tested_at`:
 * enforcing needs a successful test sign-in against what is configured now.
 */
export async function saveSsoConfig(db: Db, teamId: string, input: SsoConfigInput, now = Date.now()): Promise<void> {
  const before = await configRow(db, teamId);
  const sameIdp = before !== null && before.issuer === input.issuer && before.clientId === input.clientId;
  const secret =
    input.clientSecret === undefined
      ? (before?.secretCiphertext ?? null)
      : input.clientSecret === null
        ? null
        : encrypt(input.clientSecret, { aad: clientSecretAad(teamId) });
  const secretChanged = input.clientSecret !== undefined;
  const values = {
    issuer: input.issuer,
    client_id: input.clientId,
    client_secret_ciphertext: secret,
    default_role: input.defaultRole,
    group_claim: input.groupClaim,
    group_role_map: JSON.stringify(input.groupRoleMap),
    allowed_groups: JSON.stringify(input.allowedGroups),
    enforced: (input.enforced ? 1 : 0) as 0 | 1,
    group_sync: (input.groupSync ? 1 : 0) as 0 | 1,
    session_max_hours: input.sessionMaxHours,
    tested_at: sameIdp && !secretChanged ? (before?.testedAt ?? null) : null,
    last_test: sameIdp && !secretChanged && before?.lastTest ? JSON.stringify(before.lastTest) : null,
    updated_at: now,
  };
  if (before) await db.updateTable("sso_configs").set(values).where("team_id", "=", teamId).execute();
  else
    await db
      .insertInto("sso_configs")
      .values({ team_id: teamId, created_at: now, ...values })
      .execute();
}

export async function recordSsoTest(db: Db, teamId: string, result: SsoTestResult): Promise<void> {
  await db
    .updateTable("sso_configs")
    .set({ last_test: JSON.stringify(result), ...(result.ok ? { tested_at: result.at } : {}) })
    .where("team_id", "=", teamId)
    .execute();
}

export async function deleteSsoConfig(db: Db, teamId: string): Promise<boolean> {
  await db.deleteFrom("sso_domains").where("team_id", "=", teamId).execute();
  const res = await db.deleteFrom("sso_configs").where("team_id", "=", teamId).executeTakeFirst();
  return res.numDeletedRows > 0n;
}

// ---------------------------------------------------------------------------------------------
// Domains

export interface SsoDomain {
  domain: string;
  teamId: string;
  createdAt: number;
  approvedBy: string | null;
  approvedAt: number | null;
}

const DomainRow = z
  .object({
    domain: z.string(),
    team_id: z.string(),
    created_at: z.coerce.number(),
    approved_by: z.string().nullable(),
    approved_at: z.coerce.number().nullable(),
  })
  .transform((r): SsoDomain => ({
    domain: r.domain,
    teamId: r.team_id,
    createdAt: r.created_at,
    approvedBy: r.approved_by,
    approvedAt: r.approved_at,
  }));

export const DOMAIN_PATTERN = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/;
export const normalizeDomain = (d: string) => d.trim().toLowerCase().replace(/\.$/, "");
export const emailDomain = (email: string) => normalizeDomain(email.slice(email.lastIndexOf("@") + 1));

export async function listSsoDomains(
  db: Db,
  filter: { teamId?: string; pending?: boolean } = {},
): Promise<SsoDomain[]> {
  let q = db.selectFrom("sso_domains").selectAll();
  if (filter.teamId !== undefined) q = q.where("team_id", "=", filter.teamId);
  if (filter.pending) q = q.where("approved_at", "is", null);
  const rows = await q.orderBy("domain").execute();
  return rows.map((r) => parseRow("sso_domains", DomainRow, r));
}

export async function findSsoDomain(db: Db, domain: string): Promise<SsoDomain | null> {
  const row = await db
    .selectFrom("sso_domains")
    .selectAll()
    .where("domain", "=", normalizeDomain(domain))
    .executeTakeFirst();
  return row ? parseRow("sso_domains", DomainRow, row) : null;
}

/**
 * Sets the domains a team claims: new ones are added unapproved, dropped ones are removed, kept
 * ones keep their approval. A domain another team holds is refused (the caller says which).
 */
export async function setTeamDomains(
  db: Db,
  teamId: string,
  domains: string[],
  now = Date.now(),
): Promise<{ taken: string[] }> {
  const wanted = [...new Set(domains.map(normalizeDomain))];
  const existing = wanted.length
    ? await db.selectFrom("sso_domains").select(["domain", "team_id"]).where("domain", "in", wanted).execute()
    : [];
  const taken = existing.filter((r) => r.team_id !== teamId).map((r) => r.domain);
  if (taken.length) return { taken };
  const mine = new Set(existing.map((r) => r.domain));
  let del = db.deleteFrom("sso_domains").where("team_id", "=", teamId);
  if (wanted.length) del = del.where("domain", "not in", wanted);
  await del.execute();
  for (const domain of wanted.filter((d) => !mine.has(d)))
    await db
      .insertInto("sso_domains")
      .values({ domain, team_id: teamId, created_at: now, approved_by: null, approved_at: null })
      .execute();
  return { taken: [] };
}

export async function approveSsoDomain(
  db: Db,
  domain: string,
  approvedBy: string,
  now = Date.now(),
): Promise<SsoDomain | null> {
  await db
    .updateTable("sso_domains")
    .set({ approved_by: approvedBy, approved_at: now })
    .where("domain", "=", normalizeDomain(domain))
    .where("approved_at", "is", null)
    .execute();
  return findSsoDomain(db, domain);
}

/**
 * The team that enforces SSO for an email address: its domain is approved for that team and the
 * team's SSO is enforced. Null otherwise.
 */
export async function enforcingTeamForEmail(db: Db, email: string): Promise<{ teamId: string; slug: string } | null> {
  const row = await db
    .selectFrom("sso_domains")
    .innerJoin("sso_configs", "sso_configs.team_id", "sso_domains.team_id")
    .innerJoin("teams", "teams.id", "sso_domains.team_id")
    .select(["teams.id as team_id", "teams.slug as slug"])
    .where("sso_domains.domain", "=", emailDomain(email))
    .where("sso_domains.approved_at", "is not", null)
    .where("sso_configs.enforced", "=", 1)
    .executeTakeFirst();
  return row ? { teamId: row.team_id, slug: row.slug } : null;
}

// ---------------------------------------------------------------------------------------------
// Identities

export interface SsoIdentity {
  id: string;
  userId: string;
  teamId: string;
  email: string;
}

export async function findSsoIdentity(db: Db, issuer: string, subject: string): Promise<SsoIdentity | null> {
  const row = await db
    .selectFrom("sso_identities")
    .select(["id", "user_id", "team_id", "email"])
    .where("issuer", "=", issuer)
    .where("subject", "=", subject)
    .executeTakeFirst();
  return row ? { id: row.id, userId: row.user_id, teamId: row.team_id, email: row.email } : null;
}

export async function linkSsoIdentity(
  db: Db,
  input: { issuer: string; subject: string; userId: string; teamId: string; email: string; now?: number },
): Promise<void> {
  const now = input.now ?? Date.now();
  await db
    .insertInto("sso_identities")
    .values({
      id: newId("sid"),
      issuer: input.issuer,
      subject: input.subject,
      user_id: input.userId,
      team_id: input.teamId,
      email: input.email,
      created_at: now,
      last_sign_in_at: now,
    })
    .execute();
}

export async function touchSsoIdentity(db: Db, id: string, email: string, now = Date.now()): Promise<void> {
  await db.updateTable("sso_identities").set({ last_sign_in_at: now, email }).where("id", "=", id).execute();
}

/**
 * What ties a member's API tokens of a team to the team's SSO (lib/server/api-tokens/sso-bound.ts):
 * the team's session maximum, the member's latest SSO sign-in into the team (null: never), and
 * whether SSO is enforced for their address's domain in this team. Null when the team has no SSO.
 */
export async function ssoTokenBinding(
  db: Db,
  teamId: string,
  user: { id: string; email: string },
): Promise<{ sessionMaxHours: number; lastSignInAt: number | null; enforcedForEmail: boolean } | null> {
  const config = await db
    .selectFrom("sso_configs")
    .select(["session_max_hours", "enforced"])
    .where("team_id", "=", teamId)
    .executeTakeFirst();
  if (!config) return null;
  const [identity, domain] = await Promise.all([
    db
      .selectFrom("sso_identities")
      .select("last_sign_in_at")
      .where("user_id", "=", user.id)
      .where("team_id", "=", teamId)
      .orderBy("last_sign_in_at", "desc")
      .limit(1)
      .executeTakeFirst(),
    Number(config.enforced) === 1
      ? db
          .selectFrom("sso_domains")
          .select("domain")
          .where("domain", "=", emailDomain(user.email))
          .where("team_id", "=", teamId)
          .where("approved_at", "is not", null)
          .executeTakeFirst()
      : undefined,
  ]);
  return {
    sessionMaxHours: Number(config.session_max_hours),
    lastSignInAt: identity ? Number(identity.last_sign_in_at) : null,
    enforcedForEmail: domain !== undefined,
  };
}

/** User ids that sign in through SSO (for "how they sign in" in member lists). */
export async function ssoUserIds(db: Db, teamId: string): Promise<Set<string>> {
  const rows = await db.selectFrom("sso_identities").select("user_id").where("team_id", "=", teamId).execute();
  return new Set(rows.map((r) => r.user_id));
}

// ---------------------------------------------------------------------------------------------
// Transactions (state, nonce, PKCE verifier): single use, 10 minutes.

export const SSO_TRANSACTION_TTL_MS = 10 * 60_000;
export type SsoPurpose = "sign_in" | "test";

export interface SsoTransaction {
  teamId: string;
  purpose: SsoPurpose;
  nonce: string;
  codeVerifier: string;
  userId: string | null;
  nextPath: string | null;
}

export async function createSsoTransaction(
  db: Db,
  input: SsoTransaction & { state: string; now?: number },
): Promise<void> {
  const now = input.now ?? Date.now();
  await db
    .insertInto("sso_transactions")
    .values({
      id: sha256(input.state),
      team_id: input.teamId,
      purpose: input.purpose,
      nonce: input.nonce,
      code_verifier: input.codeVerifier,
      user_id: input.userId,
      next_path: input.nextPath,
      created_at: now,
      expires_at: now + SSO_TRANSACTION_TTL_MS,
      used_at: null,
    })
    .execute();
}

/**
 * Takes a transaction by its state, at most once: the conditional update is what makes a replayed
 * or raced callback find nothing. Null when unknown, used or expired.
 */
export async function takeSsoTransaction(db: Db, state: string, now = Date.now()): Promise<SsoTransaction | null> {
  const id = sha256(state);
  const res = await db
    .updateTable("sso_transactions")
    .set({ used_at: now })
    .where("id", "=", id)
    .where("used_at", "is", null)
    .where("expires_at", ">", now)
    .executeTakeFirst();
  if (res.numUpdatedRows === 0n) return null;
  const row = await db.selectFrom("sso_transactions").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
  return {
    teamId: row.team_id,
    purpose: row.purpose === "test" ? "test" : "sign_in",
    nonce: row.nonce,
    codeVerifier: row.code_verifier,
    userId: row.user_id,
    nextPath: row.next_path,
  };
}

export async function purgeSsoTransactions(db: Db, now = Date.now()): Promise<number> {
  const res = await db
    .deleteFrom("sso_transactions")
    .where("expires_at", "<", now - 24 * 60 * 60_000)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

// ---------------------------------------------------------------------------------------------
// The instance owner: the first owner created at setup (settings `instance.owner_user_id`); on an
// install set up before that key existed, the oldest owner membership's user.

export const INSTANCE_OWNER_KEY = "instance.owner_user_id";

export async function instanceOwnerId(db: Db): Promise<string | null> {
  const stored = await getSetting(db, INSTANCE_OWNER_KEY);
  if (stored) return stored;
  const row = await db
    .selectFrom("memberships")
    .select("user_id")
    .where("role", "=", "owner")
    .orderBy("created_at", "asc")
    .orderBy("user_id", "asc")
    .limit(1)
    .executeTakeFirst();
  if (!row) return null;
  await setSetting(db, INSTANCE_OWNER_KEY, row.user_id);
  return row.user_id;
}

export const roleRank: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };
