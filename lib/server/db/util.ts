import "server-only";
import { PostgresAdapter, type Kysely } from "kysely";
import { z } from "zod";
import { DbRowError } from "./errors";
import type { Database } from "./schema";

/** Epoch milliseconds as stored (number; tolerate a bigint string from a differently configured pg). */
export const EpochMs = z
  .union([
    z.number().int(),
    z
      .string()
      .regex(/^-?\d+$/)
      .transform(Number),
  ])
  .pipe(z.number().int().safe());

/** Epoch milliseconds → Date. */
export const EpochDate = EpochMs.transform((ms) => new Date(ms));

/** Integer 0/1 → boolean. Anything else is a corrupt row. */
export const IntBool = z.union([z.literal(0), z.literal(1)]).transform((v) => v === 1);

/** Validates a row read from the database, throwing DbRowError (with field paths, never values). */
export function parseRow<S extends z.ZodType>(table: string, schema: S, row: unknown): z.output<S> {
  const parsed = schema.safeParse(row);
  if (!parsed.success) {
    throw new DbRowError(
      table,
      parsed.error.issues.map((i) => `${i.path.join(".") || "(row)"}: ${i.message}`),
    );
  }
  return parsed.data;
}

export function isPostgres(db: Kysely<Database> | Kysely<unknown>): boolean {
  return (db as Kysely<unknown>).getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Serialises concurrent writers on one row inside a transaction: SELECT … FOR UPDATE on Postgres.
 * SQLite needs nothing (one writer at a time; a stale snapshot fails with SQLITE_BUSY instead).
 */
export async function lockRow(trx: Kysely<Database>, table: "users" | "teams", id: string): Promise<boolean> {
  let q = trx.selectFrom(table).select("id").where("id", "=", id);
  if (isPostgres(trx)) q = q.forUpdate();
  return (await q.executeTakeFirst()) !== undefined;
}

/** Runs `fn` in a transaction, or inside the caller's when `db` already is one (Kysely can't nest). */
export function inTransaction<T>(db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}
