import "server-only";
import type { ActingTeam } from "../acting-team";
import { recordAudit } from "../db/audit";
import { getMigratedDb } from "../db/index";

// "Connection used for the first time": the first successful upstream call through a connection is
// audited once. orkestr_connections.first_used_at is set by a conditional update (only while null),
// so of several requests or instances exactly one records it; after that this process remembers the
// connection and writes nothing more for it.

const known = new Set<string>();

export async function noteConnectionUsed(team: ActingTeam, now = Date.now()): Promise<void> {
  const connection = team.connection;
  if (!connection || known.has(connection.id)) return;
  try {
    const db = await getMigratedDb();
    const res = await db
      .updateTable("orkestr_connections")
      .set({ first_used_at: now })
      .where("id", "=", connection.id)
      .where("first_used_at", "is", null)
      .executeTakeFirst();
    known.add(connection.id);
    if (Number(res.numUpdatedRows) !== 1) return;
    await recordAudit(db, {
      action: "connection.first_use",
      teamId: team.team.id,
      userId: team.userId,
      credential: "session",
      targetType: "connection",
      targetId: connection.id,
      data: { name: connection.name, base_url: connection.baseUrl },
      now,
    });
  } catch (err) {
    console.error("[baton] could not record a connection's first use:", err);
  }
}
