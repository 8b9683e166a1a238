import "server-only";
import type { ActingTeam } from "./acting-team";
import { getMigratedDb, type Db } from "./db/index";
import { deleteTeam, listTeamMembers } from "./db/teams";
import { AppError } from "./errors";
import { orkestrFor, revokeEngineAccess, type VaultOptions } from "./tokens";

// Deleting a team (owner only: rbac.ts team.delete), in one place. The owner types the team's slug
// to confirm, and chooses what happens to the team's sandboxes:
// - "terminate": each sandbox the team's engine connection (the one this request acts through)
//   lists is terminated first; if that fails, nothing is deleted and the owner can try again;
// - "leave": they keep running on the engine until their own timeout, no longer reachable from
//   Baton.
// Then every member's engine token of the team is revoked on the engine (a copied token stops
// working at once), and the team's rows go (memberships, invitations, its connections).

export type SandboxChoice = "terminate" | "leave";

export interface TeamDeletion {
  team: { id: string; name: string; slug: string };
  sandboxes: SandboxChoice;
  terminated: number;
  tokensRevoked: number;
  members: number;
}

const DONE = new Set(["terminated", "expired", "failed"]);

export async function deleteTeamAs(
  acting: ActingTeam,
  input: { confirm: string; sandboxes: SandboxChoice },
  opts: VaultOptions = {},
): Promise<TeamDeletion> {
  const db: Db = opts.db ?? (await getMigratedDb());
  const { team } = acting;
  if (input.confirm.trim() !== team.slug)
    throw new AppError("confirmation_mismatch", `Type the team's slug, ${team.slug}, to confirm.`, {
      errors: { confirm: `must be ${team.slug}` },
    });

  let terminated = 0;
  if (input.sandboxes === "terminate") {
    if (!acting.connection)
      throw new AppError(
        "conflict",
        `${acting.noConnection ?? "This team has no connection of yours."} Baton cannot reach the team's sandboxes to terminate them: connect first, or choose to leave them.`,
      );
    const client = await orkestrFor(acting.userId, { ...opts, db, connectionId: acting.connection.id });
    const ids: string[] = [];
    for await (const sandbox of client.sandboxes.listAll({ limit: 100 }))
      if (!DONE.has(sandbox.status)) ids.push(sandbox.id);
    for (const id of ids) {
      await client.sandboxes.terminate(id);
      terminated++;
    }
  }

  const members = await listTeamMembers(db, team.id);
  let tokensRevoked = 0;
  for (const { user } of members) tokensRevoked += await revokeEngineAccess(user.id, { ...opts, db, teamId: team.id });
  await deleteTeam(db, team.id);
  return {
    team: { id: team.id, name: team.name, slug: team.slug },
    sandboxes: input.sandboxes,
    terminated,
    tokensRevoked,
    members: members.length,
  };
}
