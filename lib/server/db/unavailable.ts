import "server-only";

// The database went away under a request: PostgreSQL restarting (its "terminating connection due to
// administrator command", then "the database system is starting up"), refusing or dropping
// connections, or the pool waiting too long for one. Such a request fails with 503 and a sentence
// saying to retry shortly, never a 500 with a reference: nothing is wrong with Baton, and the pool
// opens fresh connections once the server is back, with no restart of Baton.

/** Seconds a client should wait before retrying: a PostgreSQL restart takes a few. */
export const DATABASE_RETRY_SECONDS = 3;

// SQLSTATE class 08 (connection exception) and 57P01-57P03 (admin shutdown, crash shutdown, cannot
// connect now); 53300 too many connections.
const SQLSTATES = /^(08\d{3}|57P0[123]|53300)$/;
const SYSTEM_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN"]);
// node-postgres reports a lost or unusable connection and a pool timeout with these messages only.
const PG_MESSAGES =
  /^(Connection terminated|Connection terminated unexpectedly|Connection terminated due to connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)$/;

/** True when `err` (or its cause) says the database server is unreachable or restarting. */
export function isDatabaseUnavailable(err: unknown): boolean {
  let c: unknown = err;
  for (let depth = 0; depth < 4 && c && typeof c === "object"; depth++) {
    const e = c as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof e.code === "string" && (SQLSTATES.test(e.code) || SYSTEM_CODES.has(e.code))) return true;
    if (typeof e.message === "string" && PG_MESSAGES.test(e.message)) return true;
    c = e.cause;
  }
  return false;
}
