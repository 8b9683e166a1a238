import "server-only";
import { ConnectionDto, ConnectionStatusDto, hostOf } from "../validations/connections";
import type { ActingTeam } from "./acting-team";
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

/** The user's connections plus whether "Use the local engine" can work (and why not). */
export async function connectionList(userId: string, opts: VaultOptions = {}) {
  const [connections, local] = await Promise.all([listUserConnections(userId, opts), localEngineStatus()]);
  return {
    connections: connections.map(toConnectionDto),
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
