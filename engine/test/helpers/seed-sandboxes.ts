import Database from "better-sqlite3";

/**
 * Writes `n` terminated sandboxes straight into an engine's store (engine.sqlite), created over the
 * past days, oldest first: rows as the engine writes them, for list-scale tests and benchmarks (the
 * engine cannot run 10,000 live sandboxes on one machine). The engine serves them like any other.
 */
export function seedTerminatedSandboxes(file: string, n: number, account = "default"): void {
  const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  const ulid = (t: number, i: number) => {
    let time = "";
    for (let k = 0, x = t; k < 10; k++, x = Math.floor(x / 32)) time = CROCKFORD[x % 32] + time;
    let rand = "";
    for (let k = 0, x = i; k < 16; k++, x = Math.floor(x / 32)) rand = CROCKFORD[x % 32] + rand;
    return time + rand;
  };
  const db = new Database(file);
  db.pragma("busy_timeout = 5000");
  // The sandboxes belong to an account (by name): the console's team sees them only in its own.
  const accountId = db.prepare("SELECT id FROM accounts WHERE name = ?").pluck().get(account) as string | undefined;
  if (!accountId) throw new Error(`no engine account named "${account}" in ${file}`);
  const insert = db.prepare(
    `INSERT INTO sandboxes(id,account_id,status,template,size,cpu,memory_mb,network,allow_domains,region,metadata,env_keys,timeout_seconds,on_timeout,auto_resume,preview_auth,preview_token_hash,uid,created_at,started_at,terminated_at,status_reason,cpu_seconds,gb_seconds)
     VALUES (?,?,'terminated','python-3.12','small',1,1024,'off',NULL,?,?,'[]',300,'kill',0,0,NULL,?,?,?,?,'terminated',?,?)`,
  );
  const start = Date.now() - 3 * 24 * 3600_000;
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const t = start + i * 20_000;
      insert.run(
        `sbx_${ulid(t, i)}`,
        accountId,
        i % 3 === 0 ? "hel1" : "fsn1",
        JSON.stringify({ batch: String(i % 50), seeded: "10k" }),
        2_000_000 + i,
        t,
        t + 100,
        t + 60_000,
        (i % 17) * 0.37,
        (i % 11) * 2.5,
      );
    }
  })();
  db.close();
}
