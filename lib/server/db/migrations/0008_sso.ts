import "server-only";
import type { Kysely } from "kysely";

// Per-team SSO with OpenID Connect (lib/server/sso/). A team has at most one identity provider
// (sso_configs, its client secret encrypted with AAD "sso_configs:<team>:client_secret"); an email
// domain belongs to one team only (sso_domains.domain is the key), and is enforced only once the
// instance owner approved it. An SSO user is known by the IdP's issuer and subject (sso_identities),
// never by email alone. A sign-in in flight (state, nonce, PKCE verifier) is one sso_transactions
// row, used at most once.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("sso_configs")
    .addColumn("team_id", "text", (c) => c.primaryKey().references("teams.id").onDelete("cascade"))
    .addColumn("issuer", "text", (c) => c.notNull())
    .addColumn("client_id", "text", (c) => c.notNull())
    .addColumn("client_secret_ciphertext", "text")
    .addColumn("default_role", "text", (c) => c.notNull())
    .addColumn("group_claim", "text")
    .addColumn("group_role_map", "text", (c) => c.notNull())
    .addColumn("allowed_groups", "text", (c) => c.notNull())
    .addColumn("enforced", "integer", (c) => c.notNull())
    .addColumn("group_sync", "integer", (c) => c.notNull())
    .addColumn("session_max_hours", "integer", (c) => c.notNull())
    .addColumn("tested_at", "bigint")
    .addColumn("last_test", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("sso_domains")
    .addColumn("domain", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("approved_by", "text")
    .addColumn("approved_at", "bigint")
    .execute();
  await db.schema.createIndex("sso_domains_team_id_idx").on("sso_domains").column("team_id").execute();

  await db.schema
    .createTable("sso_identities")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("issuer", "text", (c) => c.notNull())
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("last_sign_in_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("sso_identities_issuer_subject_key")
    .on("sso_identities")
    .columns(["issuer", "subject"])
    .unique()
    .execute();
  await db.schema.createIndex("sso_identities_user_id_idx").on("sso_identities").column("user_id").execute();

  await db.schema
    .createTable("sso_transactions")
    .addColumn("id", "text", (c) => c.primaryKey()) // sha256(state)
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("purpose", "text", (c) => c.notNull())
    .addColumn("nonce", "text", (c) => c.notNull())
    .addColumn("code_verifier", "text", (c) => c.notNull())
    .addColumn("user_id", "text")
    .addColumn("next_path", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("used_at", "bigint")
    .execute();
  await db.schema.createIndex("sso_transactions_expires_at_idx").on("sso_transactions").column("expires_at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("sso_transactions").execute();
  await db.schema.dropTable("sso_identities").execute();
  await db.schema.dropTable("sso_domains").execute();
  await db.schema.dropTable("sso_configs").execute();
}
