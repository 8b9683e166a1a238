import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../../engine/test/helpers/free-port";
import { until } from "../../../engine/test/helpers/async";
import { describeError, errorResponse } from "../errors";
import { createDb, migrateToLatest, type Db } from "./index";
import { isDatabaseUnavailable } from "./unavailable";

// PostgreSQL restarted under load: the console's pool must survive it (no crash on a connection's
// 'error' event, even one checked out inside a transaction), every request that meets the outage
// must read as 503 database_unavailable with Retry-After, and the same pool must serve again once
// the server is back, with no restart of Baton. The test runs its own throwaway cluster
// (scripts/postgres.sh with its own port and directory), so restarting it disturbs no other suite.

const SCRIPT = new URL("../../../scripts/postgres.sh", import.meta.url).pathname;
const hasPostgres = fs.existsSync("/usr/lib/postgresql") && fs.readdirSync("/usr/lib/postgresql").length > 0;

describe.skipIf(!hasPostgres)("PostgreSQL restarted under load", () => {
  let env: NodeJS.ProcessEnv;
  let dir: string;
  let db: Db;
  const cluster = (...args: string[]) =>
    execFileSync("bash", [SCRIPT, ...args], { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

  beforeAll(async () => {
    dir = `/tmp/baton-pg-restart-${randomBytes(4).toString("hex")}`;
    env = { ...process.env, BATON_PG_PORT: String(await freePort()), BATON_PG_DIR: dir };
    const url = cluster().split("\n").pop()!;
    db = createDb({ kind: "postgres", url, max: 4 });
    await migrateToLatest(db);
  }, 120_000);

  afterAll(async () => {
    await db?.destroy().catch(() => {});
    if (dir) cluster("destroy");
  }, 60_000);

  it("fails requests with 503 database_unavailable while it is down, never crashes, and recovers on the same pool", async () => {
    const failures: unknown[] = [];
    let ok = 0;
    let running = true;
    // Four clients querying in a loop, as concurrent requests would.
    const load = Array.from({ length: 4 }, async () => {
      while (running) {
        try {
          await db.selectFrom("users").select("id").limit(1).execute();
          ok++;
        } catch (err) {
          failures.push(err);
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    });

    // A transaction holding its connection between two statements while the server goes away: the
    // connection's 'error' event fires with no query running (the crash on the old code).
    let stopped!: () => void;
    const serverStopped = new Promise<void>((r) => (stopped = r));
    const held = db
      .transaction()
      .execute(async (trx) => {
        await sql`select 1`.execute(trx);
        await serverStopped;
        await sql`select 1`.execute(trx);
      })
      .then(
        () => null,
        (err: unknown) => err,
      );

    await until("a few answers before the restart", () => ok >= 8);
    cluster("stop");
    stopped();
    const heldError = await held;
    // Requests keep coming while it is down; wait until some met the outage.
    await until("requests failing while the server is down", () => failures.length >= 4);
    cluster();
    const okAfterRestart = ok;
    await until("answers again on the same pool", () => ok >= okAfterRestart + 20, { timeout: 30_000 });
    running = false;
    await Promise.all(load);

    expect(heldError).toBeInstanceOf(Error);
    for (const err of [heldError, ...failures]) {
      expect(isDatabaseUnavailable(err), String(err)).toBe(true);
      const { status, body } = describeError(err);
      expect(status).toBe(503);
      expect(body.code).toBe("database_unavailable");
      expect(body.detail).toMatch(/database is unavailable .*Try again in \d+ s/);
    }
    const response = errorResponse(failures[0]);
    expect(response.status).toBe(503);
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
  }, 120_000);
});
