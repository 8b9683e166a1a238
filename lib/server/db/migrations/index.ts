import "server-only";
import type { Migration, MigrationProvider } from "kysely";
import * as m0001 from "./0001_init";
import * as m0002 from "./0002_engine_token_id";
import * as m0003 from "./0003_leases";
import * as m0004 from "./0004_webhook_receivers";
import * as m0005 from "./0005_audit_log";
import * as m0006 from "./0006_members";
import * as m0007 from "./0007_account_security";
import * as m0008 from "./0008_sso";
import * as m0009 from "./0009_usage";
import * as m0010 from "./0010_billing_delegation";
import * as m0011 from "./0011_spend_caps";
import * as m0012 from "./0012_api_tokens";
import * as m0013 from "./0013_api_token_limits";
import * as m0014 from "./0014_api_token_cap_alerts";

// Every migration, imported statically: bundlers (Next.js) cannot glob a folder at runtime.
// Names sort lexically; append new ones as "0002_<what>" and never edit a released migration.
export const migrations: Readonly<Record<string, Migration>> = {
  "0001_init": m0001,
  "0002_engine_token_id": m0002,
  "0003_leases": m0003,
  "0004_webhook_receivers": m0004,
  "0005_audit_log": m0005,
  "0006_members": m0006,
  "0007_account_security": m0007,
  "0008_sso": m0008,
  "0009_usage": m0009,
  "0010_billing_delegation": m0010,
  "0011_spend_caps": m0011,
  "0012_api_tokens": m0012,
  "0013_api_token_limits": m0013,
  "0014_api_token_cap_alerts": m0014,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => ({ ...migrations }),
};
