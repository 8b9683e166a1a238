import "server-only";
import { teamOfConnection } from "./acting-team";
import type { CurrentUser } from "./auth";
import type { Connection } from "./db/connections";
import { DbNotFoundError } from "./db/errors";
import { AppError } from "./errors";
import { can } from "./rbac";

// Who may do what with one of their own connections. A connection belongs to a team
// (lib/server/acting-team.ts), so the role that counts is the one in that team, not in whichever
// team the user acts in now:
// - activating it (which picks the team the user works in) needs membership of its team, any role:
//   the role there then governs every request;
// - replacing its token or removing it needs connections.manage in its team;
// - a connection no team of the user's can use (a team they left, or no team while they are in
//   several) can only be removed: that takes nothing from anyone.

export type ConnectionAction = "activate" | "replace_token" | "remove";

/** The user's connection `connectionId` when they may do `action` with it; else 404 (not theirs) or 403. */
export function authorizeConnectionAction(
  current: CurrentUser,
  connectionId: string,
  action: ConnectionAction,
): Connection {
  const connection = current.connections.find((c) => c.id === connectionId);
  if (!connection) throw new DbNotFoundError("connection");
  const team = teamOfConnection(current, connection);
  if (!team) {
    if (action === "remove") return connection;
    throw new AppError(
      "forbidden",
      `The connection "${connection.name}" belongs to no team of yours (a team you left, or no team while you are in several), ` +
        "so it cannot be used. Remove it, and add a new one while working in the right team.",
    );
  }
  if (action === "activate" || can(team.role, "connections.manage")) return connection;
  throw new AppError(
    "forbidden",
    `Your role in ${team.team.name} (${team.role}), the team of the connection "${connection.name}", does not allow this (connections.manage).`,
  );
}
