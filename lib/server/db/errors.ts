import "server-only";

// Errors the repositories throw. The route wrapper maps them onto the app's { detail, code } shape:
// DbConflictError → 409, DbNotFoundError → 404, DbRowError → 500 (never echoing the row).

/** A unique constraint or an invariant the caller can fix (email taken, slug taken, last owner…). */
export class DbConflictError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "DbConflictError";
  }
}

export class DbNotFoundError extends Error {
  constructor(
    readonly entity: string,
    message = `${entity} not found`,
  ) {
    super(message);
    this.name = "DbNotFoundError";
  }
}

/** A row read from the database does not match its schema (corruption, or a newer app wrote it). */
export class DbRowError extends Error {
  constructor(
    readonly table: string,
    readonly issues: string[],
  ) {
    super(`invalid row in ${table}: ${issues.join("; ")}`);
    this.name = "DbRowError";
  }
}

export class MigrationError extends Error {
  constructor(
    readonly migration: string | undefined,
    options: { cause?: unknown },
  ) {
    const reason = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(
      migration ? `database migration "${migration}" failed: ${reason}` : `database migration failed: ${reason}`,
      options,
    );
    this.name = "MigrationError";
  }
}

/**
 * True when `err` is a unique-constraint violation, on SQLite (SQLITE_CONSTRAINT_UNIQUE/PRIMARYKEY)
 * or Postgres (23505). With `index`, also checks which index or column it was: Postgres names the
 * constraint, SQLite names the columns ("UNIQUE constraint failed: users.email_normalized").
 */
export function isUniqueViolation(err: unknown, match?: { index?: string; column?: string }): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown };
  const message = typeof e.message === "string" ? e.message : "";
  const isPg = e.code === "23505";
  const isSqlite = e.code === "SQLITE_CONSTRAINT_UNIQUE" || e.code === "SQLITE_CONSTRAINT_PRIMARYKEY";
  if (!isPg && !isSqlite) return false;
  if (!match) return true;
  if (isPg) return match.index !== undefined && e.constraint === match.index;
  return match.column !== undefined && message.includes(match.column);
}
