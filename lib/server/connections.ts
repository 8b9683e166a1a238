import "server-only";
import { ConnectionDto, ConnectionListItemDto, ConnectionStatusDto, hostOf } from "../validations/connections";
import { boundTeamId, teamOfConnection, type ActingTeam } from "./acting-team";
import type { CurrentUser } from "./auth";
import { authorizeConnectionAction, type ConnectionAction } from "./connection-access";
import { localEngineStatus } from "./local-engine";
import { checkActiveConnection, listUserConnections, type ConnectionView, type VaultOptions } from "./tokens";

// The browser's view of the token vault: DTOs (zod-parsed, so nothing else leaks) for the
// connections API, the Settings page and the header's status indicator.

export function toConnectionDto(c: ConnectionView): ConnectionDto {
  return ConnectionDto.parse({
    id: c.id,
    name: c.name,
    base_url: c.baseUrl,
    token_hint: c.tokenHint,
    is_active: c.isActive,
    is_local_engine: c.isLocalEngine,
    last_checked_at: c.lastCheckedAt,
    last_error: c.lastError,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  });
}

/** Whether `current` may do `action` with the connection (the same check PATCH and DELETE make). */
function allows(current: CurrentUser, connectionId: string, action: ConnectionAction): boolean {
  try {
    authorizeConnectionAction(current, connectionId, action);
    return true;
  } catch {
    return false;
  }
}

/**
 * The user's connections of the acting team (connections are per team), plus those no team of
 * theirs can use (a team they left, or made without a team while they are in several: shown so
 * they can be removed), each with its team and what they may do with it, plus whether "Use the
 * local engine" can work (and why not). `is_active` says which one requests of this team use.
 */
export async function connectionList(current: CurrentUser, team: ActingTeam | null, opts: VaultOptions = {}) {
  const [all, local] = await Promise.all([listUserConnections(current.user.id, opts), localEngineStatus()]);
  const teamIds = new Set(current.memberships.map((m) => m.team.id));
  const connections = all.filter((view) => {
    const row = current.connections.find((c) => c.id === view.id);
    const bound = row ? boundTeamId(current, row) : null;
    return bound === null || !teamIds.has(bound) || bound === team?.team.id;
  });
  return {
    connections: connections.map((view) => {
      const row = current.connections.find((c) => c.id === view.id);
      return ConnectionListItemDto.parse({
        ...toConnectionDto(view),
        is_active: team?.connection ? view.id === team.connection.id : false,
        team_name: row ? (teamOfConnection(current, row)?.team.name ?? null) : null,
        allowed: {
          activate: allows(current, view.id, "activate"),
          replace_token: allows(current, view.id, "replace_token"),
          remove: allows(current, view.id, "remove"),
        },
      });
    }),
    local_engine: { available: local.available, origin: local.origin, reason: local.reason ?? null },
  };
}

/**
 * The connection requests act through (the acting team's, lib/server/acting-team.ts) and a live
 * check of it (recorded on the row): the header shows the connection the pages and the API use.
 * Never throws for what the upstream does; a vault problem (token no longer decryptable) is an
 * "error" state with its detail. No team, or no connection of the team: "none", with why.
 */
export async function connectionStatus(team: ActingTeam | null, opts: VaultOptions = {}): Promise<ConnectionStatusDto> {
  const checkedAt = new Date().toISOString();
  if (!team?.connection) {
    const detail = team ? team.noConnection : null;
    return { state: "none", connection: null, detail, code: null, checked_at: checkedAt };
  }
  let result: Awaited<ReturnType<typeof checkActiveConnection>>;
  try {
    result = await checkActiveConnection(team.userId, { ...opts, connectionId: team.connection.id });
  } catch (err) {
    const e = err as { code?: unknown; detail?: unknown };
    if (typeof e.code === "string" && typeof e.detail === "string") {
      return { state: "error", connection: null, detail: e.detail, code: e.code, checked_at: checkedAt };
    }
    throw err;
  }
  if (!result) return { state: "none", connection: null, detail: null, code: null, checked_at: checkedAt };
  const { connection: c, check } = result;
  return ConnectionStatusDto.parse({
    state: check.ok ? "ok" : "error",
    connection: {
      id: c.id,
      name: c.name,
      base_url: c.baseUrl,
      host: hostOf(c.baseUrl),
      token_hint: c.tokenHint,
      is_local_engine: c.isLocalEngine,
    },
    detail: check.ok ? (check.warning ?? null) : check.detail,
    code: check.ok ? null : check.code,
    checked_at: checkedAt,
  });
}
