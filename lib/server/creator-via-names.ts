import "server-only";
import { getApiToken, listApiTokens } from "./db/api-tokens";
import type { Db } from "./db/index";

// The names behind a sandbox's `baton.token` (lib/sandbox-creator.ts), for the console's "Created
// by … via API token <name>": looked up here, server-side, in the acting team's tokens only (a
// revoked token keeps its name; a token id of another team names nothing).

/** The team's tokens, id → name: for the sandbox list (one query, none per row). */
export async function teamTokenNames(db: Db, teamId: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const t of await listApiTokens(db, { teamId, limit: 10_000 })) out[t.id] = t.name;
  return out;
}

/** One token's name in the team, or null: for a sandbox's detail page. */
export async function teamTokenName(db: Db, teamId: string, tokenId: string): Promise<string | null> {
  return (await getApiToken(db, teamId, tokenId))?.name ?? null;
}
