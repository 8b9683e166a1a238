import { ApiError } from "../errors.js";
import type { Db } from "../store/db.js";
import type { TokenRecord } from "../store/tokens.js";

/**
 * Long-lived responses (SSE and NDJSON streams: events and build logs followed live, exec streams;
 * terminal WebSockets) each hold a lease here, taken when the stream opens and given back when it
 * ends, however it ends. Leases do two jobs:
 *
 * - **Caps** (security item 5): a token, and an account with all its tokens, may hold only so many
 *   streams at once (ORKESTR_ENGINE_STREAMS_PER_TOKEN / _PER_ACCOUNT); one more is `429
 *   too_many_streams` with Retry-After, before anything is streamed. Without them one token could
 *   pin any number of sockets, timers and subscriptions.
 * - **Revocation reaches open streams** (security item 3): a request's token is checked when it
 *   arrives, but a stream outlives that check. A token revoked in this engine (DELETE
 *   /_admin/tokens/:id, which the console calls on sign-out everywhere, team removal or a disabled
 *   user) ends its streams at once; one revoked by another process (the engine:token CLI) or that
 *   expired is found by a check of every streaming token every ORKESTR_ENGINE_STREAM_AUTH_CHECK_MS
 *   (2 s). Each stream is ended by its own route, with a last frame (or a WebSocket close) that
 *   says why.
 */

/** Why a stream was ended from the engine's side. */
export interface StreamCutOff {
  code: "token_revoked" | "token_expired";
  detail: string;
}

export interface StreamLimits {
  perToken: number;
  perAccount: number;
  /** How often the tokens of open streams are read again (ms). */
  authCheckMs: number;
}

export interface StreamLease {
  /** Gives the slot back; only the first call counts. */
  release(): void;
}

interface Held {
  tokenId: string;
  cutOff(why: StreamCutOff): void;
  release(): void;
}

const REVOKED: StreamCutOff = {
  code: "token_revoked",
  detail: "The token this stream was opened with was revoked, so the stream ended; sign in again (or use a new token).",
};
const EXPIRED: StreamCutOff = {
  code: "token_expired",
  detail: "The token this stream was opened with expired, so the stream ended; sign in again (or use a new token).",
};

/** Seconds a client refused for too many streams is told to wait: about how long a closed one takes to count as closed. */
const RETRY_AFTER_SECONDS = 5;

export class StreamLeases {
  private readonly held = new Set<Held>();
  private readonly perToken = new Map<string, number>();
  private readonly perAccount = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private readonly tokenStates;

  constructor(
    db: Db,
    private readonly limits: StreamLimits,
  ) {
    this.tokenStates = db.prepare(
      "SELECT id, revoked_at, expires_at FROM tokens WHERE id IN (SELECT value FROM json_each(?))",
    );
  }

  /**
   * A slot for one stream of `token`, or 429 too_many_streams. `cutOff` ends the stream from the
   * engine's side (its token was revoked or expired); the lease is released before it is called.
   */
  acquire(token: TokenRecord, cutOff: (why: StreamCutOff) => void): StreamLease {
    const accountId = token.account.id;
    const byToken = this.perToken.get(token.id) ?? 0;
    const byAccount = this.perAccount.get(accountId) ?? 0;
    if (byToken >= this.limits.perToken)
      throw tooMany(
        `This token already has ${byToken} streams open (live events, build logs, exec streams, terminals), the most one token may hold at once; close one and retry`,
        { max_streams_per_token: this.limits.perToken },
      );
    if (byAccount >= this.limits.perAccount)
      throw tooMany(
        `This account's tokens already have ${byAccount} streams open (live events, build logs, exec streams, terminals), the most one account may hold at once; close one and retry`,
        { max_streams_per_account: this.limits.perAccount },
      );
    this.perToken.set(token.id, byToken + 1);
    this.perAccount.set(accountId, byAccount + 1);
    let released = false;
    const held: Held = {
      tokenId: token.id,
      cutOff,
      release: () => {
        if (released) return;
        released = true;
        this.held.delete(held);
        decrement(this.perToken, token.id);
        decrement(this.perAccount, accountId);
        if (this.held.size === 0) this.stopChecking();
      },
    };
    this.held.add(held);
    this.startChecking();
    return { release: held.release };
  }

  /** Open streams, per token and per account (for tests and diagnostics). */
  counts(): { tokens: Record<string, number>; accounts: Record<string, number> } {
    return { tokens: Object.fromEntries(this.perToken), accounts: Object.fromEntries(this.perAccount) };
  }

  /** The token was revoked in this engine: every stream it opened ends now. */
  revoked(tokenId: string): void {
    this.end((h) => h.tokenId === tokenId, REVOKED);
  }

  /** Reads every streaming token again and ends the streams of those that no longer authenticate. */
  check(now = Date.now()): void {
    const ids = [...new Set([...this.held].map((h) => h.tokenId))];
    if (!ids.length) return;
    let rows: { id: string; revoked_at: number | null; expires_at: number | null }[];
    try {
      rows = this.tokenStates.all(JSON.stringify(ids)) as typeof rows;
    } catch {
      return; // the database is closing (shutdown): the streams end with the server
    }
    const byId = new Map(rows.map((r) => [r.id, r]));
    const why = new Map<string, StreamCutOff>();
    for (const id of ids) {
      const r = byId.get(id);
      // A token that is gone altogether authenticates nothing either.
      if (!r || r.revoked_at !== null) why.set(id, REVOKED);
      else if (r.expires_at !== null && r.expires_at <= now) why.set(id, EXPIRED);
    }
    for (const [id, cut] of why) this.end((h) => h.tokenId === id, cut);
  }

  /** Engine shutdown: no more checks (the streams end with the server). */
  close(): void {
    this.stopChecking();
  }

  private end(which: (h: Held) => boolean, why: StreamCutOff): void {
    for (const h of [...this.held]) {
      if (!which(h)) continue;
      h.release();
      try {
        h.cutOff(why);
      } catch {
        // a stream that cannot be written to any more is gone already
      }
    }
  }

  private startChecking(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.check(), this.limits.authCheckMs);
    this.timer.unref();
  }

  private stopChecking(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}

function tooMany(detail: string, extra: Record<string, unknown>): ApiError {
  return new ApiError(
    "too_many_streams",
    detail,
    { ...extra, retry_after_seconds: RETRY_AFTER_SECONDS },
    { "Retry-After": String(RETRY_AFTER_SECONDS) },
  );
}
