import "server-only";
import type { Db } from "./index";

// Instance-wide key/value settings (text values; JSON-encode structured ones).

export async function getSetting(db: Db, key: string): Promise<string | null> {
  const row = await db.selectFrom("settings").select("value").where("key", "=", key).executeTakeFirst();
  return typeof row?.value === "string" ? row.value : null;
}

export async function setSetting(db: Db, key: string, value: string): Promise<void> {
  await db
    .insertInto("settings")
    .values({ key, value })
    .onConflict((oc) => oc.column("key").doUpdateSet({ value }))
    .execute();
}

export async function deleteSetting(db: Db, key: string): Promise<void> {
  await db.deleteFrom("settings").where("key", "=", key).execute();
}
