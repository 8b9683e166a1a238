import "server-only";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ActingTeam } from "../../lib/server/acting-team";
import { createDb, migrateToLatest, type Db } from "../../lib/server/db/index";
import { testBackends, type TestDatabase } from "../../lib/server/db/test-backends";
import type { AppError } from "../../lib/server/errors";
import type { CapsJobDeps } from "../../lib/server/usage/caps-job";
import { setCap, writeCapState } from "../../lib/server/usage/caps-store";
import { windowKey } from "../../lib/usage/caps";

// Creates are checked under the team's cap lock (lib/server/usage/cap-lock.ts), against the figure
// the caps job last computed: the check does not estimate what a create will cost (orkestr meters
// what a sandbox uses once it runs), so a create is refused only once the cap's state says reached.
// What the lock guarantees is the order: a create is checked after the previous holder (a create's
// upstream call, the job's evaluation) is done, against the state it left. Two ways that state
// changes under a create's feet, each tested with parallel requests:
// - the cap is reached after the first create (the upstream's create here books what makes the cap
//   reached, as the job's next reading would): of parallel creates exactly one succeeds, the rest
//   get 402 spend_cap_reached;
// - the caps job finds the cap reached while creates arrive: none of them slips through.
// Each Baton instance is its own copy of the modules (its own in-process lock, as another process
// has) with its own database handle. On PostgreSQL two instances share the database; on SQLite
// there is one instance (one process owns the file). On the old, per-process lock, the PostgreSQL
// runs let one create per instance through.

const LIMIT = 1_000;
/** How long the upstream takes to create a sandbox: long enough for every request to overlap it. */
const CREATE_MS = 150;

interface Instance {
  db: Db;
  underCaps: typeof import("../../lib/server/usage/cap-check").underCaps;
  enforceTeamCaps: typeof import("../../lib/server/usage/caps-job").enforceTeamCaps;
}

/** A fresh copy of the cap modules: what another Baton process would have. */
async function instance(db: Db): Promise<Instance> {
  vi.resetModules();
  const check = await import("../../lib/server/usage/cap-check");
  const job = await import("../../lib/server/usage/caps-job");
  return { db, underCaps: check.underCaps, enforceTeamCaps: job.enforceTeamCaps };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(testBackends)("creates under the spend-cap lock on $name", (backend) => {
  let t: TestDatabase;
  let second: Db | null = null;
  let instances: Instance[];
  let n = 0;

  beforeAll(async () => {
    t = await backend.open();
    await migrateToLatest(t.db);
    // PostgreSQL: a second instance with its own pool on the same schema.
    if (backend.name === "postgres")
      second = createDb({ kind: "postgres", url: process.env.TEST_DATABASE_URL!, schema: t.location, max: 5 });
    instances = [await instance(t.db), ...(second ? [await instance(second)] : [])];
  });

  afterAll(async () => {
    await second?.destroy();
    await t?.close();
  });

  /** A team with a block cap whose last computed figure is `spentMicro`. */
  async function teamAt(spentMicro: number) {
    const teamId = `team_lock_${++n}`;
    await t.db
      .insertInto("teams")
      .values({ id: teamId, name: `Lock ${n}`, slug: `lock-${n}`, created_at: 0, spend_cap_eur: null })
      .execute();
    const { after: cap } = await setCap(t.db, {
      teamId,
      userId: null,
      window: "month",
      limitMicro: LIMIT,
      action: "block",
      by: "usr_admin",
    });
    const now = Date.now();
    const state = (spent: number) =>
      writeCapState(t.db, {
        capId: cap.id,
        windowKey: windowKey("month", now),
        spentMicro: spent,
        evaluatedAt: Date.now(),
        reachedAt: spent >= LIMIT ? Date.now() : null,
        actedAt: null,
        lastResult: null,
      });
    await state(spentMicro);
    const team: ActingTeam = {
      userId: "usr_member",
      team: {
        id: teamId,
        name: `Lock ${n}`,
        slug: `lock-${n}`,
        createdAt: new Date(0),
        spendCapEur: null,
        adminsManageBilling: false,
      },
      role: "member",
      connection: null,
      noConnection: null,
    };
    return { team, state };
  }

  /** Settles each create: "created", or the error's code and status (an instance's own AppError class). */
  const outcome = (p: Promise<unknown>) =>
    p.then(
      () => "created",
      (err: unknown) =>
        err instanceof Error && err.name === "AppError"
          ? `${(err as AppError).status} ${(err as AppError).code}`
          : `unexpected: ${String(err)}`,
    );

  it("the cap reached by the first create: of parallel creates on every instance, exactly one succeeds", async () => {
    const { team, state } = await teamAt(LIMIT - 1);
    let upstreamCreates = 0;
    // The upstream's create; the sandbox it makes takes the team to its cap (the job's next
    // reading would write this figure).
    const create = async () => {
      upstreamCreates++;
      await sleep(CREATE_MS);
      await state(LIMIT);
      return { id: `sbx_${upstreamCreates}` };
    };
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => {
        const at = instances[i % instances.length]!;
        return outcome(at.underCaps(at.db, team, "create a sandbox", create));
      }),
    );
    expect(results.filter((r) => r === "created")).toHaveLength(1);
    expect(results.filter((r) => r === "402 spend_cap_reached")).toHaveLength(5);
    expect(upstreamCreates).toBe(1);
  });

  it("creates that arrive while the caps job (on another instance) finds the cap reached are refused", async () => {
    const { team } = await teamAt(LIMIT - 1);
    const jobAt = instances[instances.length - 1]!;
    let upstreamCreates = 0;
    const deps: CapsJobDeps = {
      // Reading the usage record takes a while; it says the cap is reached.
      spend: async () => {
        await sleep(CREATE_MS);
        return { team: LIMIT + 5, byUser: new Map() };
      },
      pause: () => Promise.resolve({ paused: [], failed: [] }),
      notify: () => Promise.resolve({}),
    };
    const job = jobAt.enforceTeamCaps(jobAt.db, team.team.id, deps);
    // The job has the lock (it listed the caps and is reading the spend) when the creates arrive.
    await sleep(CREATE_MS / 3);
    const results = await Promise.all(
      instances.flatMap((at) =>
        [0, 1].map(() =>
          outcome(
            at.underCaps(at.db, team, "create a sandbox", () => {
              upstreamCreates++;
              return Promise.resolve({ id: "sbx_x" });
            }),
          ),
        ),
      ),
    );
    expect((await job).map((d) => d.reached)).toEqual([true]);
    expect(
      results.every((r) => r === "402 spend_cap_reached"),
      results.join(", "),
    ).toBe(true);
    expect(upstreamCreates).toBe(0);
  });

  it("the lock is per team: another team's create does not wait for it", async () => {
    const a = await teamAt(0);
    const b = await teamAt(0);
    const at = instances[0]!;
    let release!: () => void;
    const held = at.underCaps(at.db, a.team, "create a sandbox", () => new Promise<void>((r) => (release = r)));
    await sleep(20);
    // Team b's create, on the other instance where there is one, goes through while a's is held.
    const other = instances[instances.length - 1]!;
    expect(await outcome(other.underCaps(other.db, b.team, "create a sandbox", () => Promise.resolve(1)))).toBe(
      "created",
    );
    release();
    expect(await outcome(held)).toBe("created");
  });
});
