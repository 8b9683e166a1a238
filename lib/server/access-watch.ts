import "server-only";
import { boundTeamId, resolveActingTeam, type ActingTeam, type UserTeamsAndConnections } from "./acting-team";
import type { Connection } from "./db/connections";
import type { Db } from "./db/index";
import { findUserById } from "./db/users";
import { actingCan, type Permission } from "./rbac";

// Long-lived answers (a terminal relayed by the console, a proxied event stream, the live sandbox
// stream) are authorized once, when they open; this is how they learn that what allowed them is
// gone: the session (signed out, signed out everywhere, expired, the user disabled or deleted), the
// membership of the team, the role's permission, or the connection they go through (removed, its
// engine token revoked, its token replaced). Each is re-asked on a timer, and the answer closes the
// stream with one of these sentences.

/** How often an open stream re-asks (tests may shorten them). Terminals: input must stop within 5 s. */
export const ACCESS_RECHECK = {
  /** The terminal relay: reads the session from the database each time (no cache in between). */
  terminalMs: 2_000,
  /** SSE and other proxied streams: through the 2 s session memory (lib/server/session-cache.ts). */
  streamMs: 4_000,
};

export type AccessLossCode = "session_ended" | "removed_from_team" | "role_changed" | "connection_changed";

export interface AccessLoss {
  code: AccessLossCode;
  /** What happened and what to do, for the person whose stream closed. */
  detail: string;
}

/** What a stream was opened with, and must still have to go on. */
export interface OpenedWith {
  userId: string;
  team: { id: string; name: string };
  /** The connection it goes through (null: it opened without one, and uses none). */
  connection: Pick<Connection, "id" | "name" | "baseUrl" | "tokenHint" | "engineTokenId"> | null;
  permission: Permission;
  /** How the person calls what closes: "terminal", "event stream", … */
  what: string;
}

/** What a stream pins at open time from the request's acting team. */
export function openedWith(team: ActingTeam, permission: Permission, what: string): OpenedWith {
  return {
    userId: team.userId,
    team: { id: team.team.id, name: team.team.name },
    connection: team.connection,
    permission,
    what,
  };
}

/**
 * Whether the user, as the session check sees them now (`current`; null: no live session), still
 * has what `opened` needed. Null when they do; else what they lost. The session itself is judged by
 * the caller (sessionEnded()), which knows why it ended.
 */
export function accessLost(current: UserTeamsAndConnections, opened: OpenedWith): AccessLoss | null {
  if (current.user.id !== opened.userId) return { code: "session_ended", detail: SIGNED_OUT };
  // The same team as at open time, by id: never whichever team the user acts in now.
  const team = resolveActingTeam(current, { teamId: opened.team.id });
  if (!team) return { code: "removed_from_team", detail: `You were removed from the team ${opened.team.name}.` };
  if (!actingCan(team, opened.permission)) {
    return {
      code: "role_changed",
      detail: `Your role in ${team.team.name} is now ${team.role}, which does not allow this ${opened.what} (${opened.permission}).`,
    };
  }
  if (opened.connection) {
    const was = opened.connection;
    const now = current.connections.find((c) => c.id === was.id);
    const same =
      now !== undefined &&
      // Still counted as this team's (a connection without a team stops being one when the user joins a second).
      boundTeamId(current, now) === opened.team.id &&
      now.baseUrl === was.baseUrl &&
      now.tokenHint === was.tokenHint &&
      now.engineTokenId === was.engineTokenId;
    if (!same) {
      return {
        code: "connection_changed",
        detail: `The connection "${was.name}" this ${opened.what} used was removed, or its token was revoked or replaced.`,
      };
    }
  }
  return null;
}

const SIGNED_OUT = "Your session was signed out or has expired. Sign in again.";

/** Why a session that was live is not any more: the user disabled or deleted, else signed out or expired. */
export async function sessionEnded(db: Db, userId: string): Promise<AccessLoss> {
  const user = await findUserById(db, userId).catch(() => undefined);
  if (user === null) return { code: "session_ended", detail: "Your account was deleted." };
  if (user?.disabledAt) {
    return {
      code: "session_ended",
      detail: "Your account was disabled, so you were signed out. Ask a team owner or admin.",
    };
  }
  return { code: "session_ended", detail: SIGNED_OUT };
}

/**
 * A passthrough body (an upstream stream handed to the browser) that ends when `recheck` reports a
 * loss, asked every `intervalMs`: the upstream read is cancelled, so nothing more reaches the
 * browser. A failing recheck (the database away for a moment) is asked again next time.
 */
export function endWhenAccessLost(
  body: ReadableStream<Uint8Array>,
  recheck: () => Promise<AccessLoss | null>,
  intervalMs = ACCESS_RECHECK.streamMs,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let timer: ReturnType<typeof setInterval> | null = null;
  let done = false;
  const stop = () => {
    done = true;
    if (timer) clearInterval(timer);
    timer = null;
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setInterval(() => {
        recheck().then(
          (loss) => {
            if (!loss || done) return;
            stop();
            void reader.cancel(loss.detail).catch(() => undefined);
            try {
              controller.close();
            } catch {
              // already closed
            }
          },
          () => undefined,
        );
      }, intervalMs);
      timer.unref?.();
    },
    async pull(controller) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (err) {
        stop();
        controller.error(err);
        return;
      }
      if (done) return;
      if (next.done) {
        stop();
        controller.close();
      } else controller.enqueue(next.value);
    },
    cancel(reason) {
      stop();
      return reader.cancel(reason);
    },
  });
}
