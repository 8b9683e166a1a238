import "server-only";
import type { Db } from "../db/index";

// Booking a reading (issue 22): a sandbox's lifetime counters (GET /v1/sandboxes/{id}/metrics →
// lifetime.cpu_seconds, lifetime.gb_seconds, the latter GiB-seconds of working set) become the
// growth since the stored reading, booked on the UTC day of the reading. Counters are kept in whole
// milliseconds (integers on both dialects; the meters give at most millisecond precision).
//
// Safe to replay and against two writers (two Baton instances, or the terminate-time reading racing
// the job): the meter row is updated by compare-and-swap on the reading it was computed against,
// in the same transaction as the booking. A writer that lost the race reads again and books only
// what is still new. A reading no newer (by time) than the stored one books nothing, and counters
// that went backwards (a new upstream, a reset meter) restart the baseline without a negative booking.

export interface Reading {
  teamId: string;
  sandboxId: string;
  /** Lifetime on-CPU seconds and GiB-seconds, as the upstream reports them. */
  cpuSeconds: number;
  gibSeconds: number;
  /** When the counters were read (epoch ms): the UTC day the growth is booked on. */
  at: number;
  userId: string | null;
  template: string | null;
  status: string | null;
  /** A terminal reading: the sandbox is gone or terminated, nothing more will be metered. */
  final?: boolean;
}

export interface Booked {
  cpuMs: number;
  gibMs: number;
  date: string;
}

const toMs = (seconds: number) => (Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : 0);

/** `YYYY-MM-DD` of an instant, UTC. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

const ATTEMPTS = 8;

/** Books one reading; answers what it booked (zeros when nothing was new). */
export async function bookReading(db: Db, reading: Reading): Promise<Booked> {
  const cpu = toMs(reading.cpuSeconds);
  const gib = toMs(reading.gibSeconds);
  const date = utcDay(reading.at);
  const finalAt = reading.final ? reading.at : null;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const result = await db.transaction().execute(async (trx) => {
      const stored = await trx
        .selectFrom("usage_meters")
        .selectAll()
        .where("team_id", "=", reading.teamId)
        .where("sandbox_id", "=", reading.sandboxId)
        .executeTakeFirst();
      if (!stored) {
        // The first reading of this sandbox: all its lifetime so far is new.
        const inserted = await trx
          .insertInto("usage_meters")
          .values({
            team_id: reading.teamId,
            sandbox_id: reading.sandboxId,
            user_id: reading.userId,
            template: reading.template,
            status: reading.status,
            cpu_ms: cpu,
            gib_ms: gib,
            read_at: reading.at,
            prev_cpu_ms: null,
            prev_gib_ms: null,
            prev_read_at: null,
            final_at: finalAt,
          })
          .onConflict((oc) => oc.columns(["team_id", "sandbox_id"]).doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return null; // another writer was first
        await addDaily(trx, reading, date, cpu, gib);
        return { cpuMs: cpu, gibMs: gib, date };
      }
      if (reading.at <= Number(stored.read_at)) {
        // A replay, or a reading older than the stored one: nothing new. A late final reading still
        // marks the meter finished.
        if (finalAt !== null && stored.final_at === null) {
          await trx
            .updateTable("usage_meters")
            .set({ final_at: finalAt, status: reading.status ?? stored.status })
            .where("team_id", "=", reading.teamId)
            .where("sandbox_id", "=", reading.sandboxId)
            .where("final_at", "is", null)
            .execute();
        }
        return { cpuMs: 0, gibMs: 0, date };
      }
      const oldCpu = Number(stored.cpu_ms);
      const oldGib = Number(stored.gib_ms);
      // A counter that went backwards restarts the baseline: never a negative booking.
      const dCpu = cpu >= oldCpu ? cpu - oldCpu : 0;
      const dGib = gib >= oldGib ? gib - oldGib : 0;
      const swapped = await trx
        .updateTable("usage_meters")
        .set({
          cpu_ms: cpu,
          gib_ms: gib,
          read_at: reading.at,
          prev_cpu_ms: oldCpu,
          prev_gib_ms: oldGib,
          prev_read_at: Number(stored.read_at),
          status: reading.status ?? stored.status,
          user_id: stored.user_id ?? reading.userId,
          template: stored.template ?? reading.template,
          final_at: stored.final_at ?? finalAt,
        })
        .where("team_id", "=", reading.teamId)
        .where("sandbox_id", "=", reading.sandboxId)
        .where("cpu_ms", "=", oldCpu)
        .where("gib_ms", "=", oldGib)
        .where("read_at", "=", Number(stored.read_at))
        .executeTakeFirst();
      if (Number(swapped.numUpdatedRows) === 0) return null; // another writer moved it: read again
      if (dCpu > 0 || dGib > 0)
        await addDaily(
          trx,
          { ...reading, userId: stored.user_id ?? reading.userId, template: stored.template ?? reading.template },
          date,
          dCpu,
          dGib,
        );
      return { cpuMs: dCpu, gibMs: dGib, date };
    });
    if (result) return result;
  }
  throw new Error(`usage reading of ${reading.sandboxId} lost the race ${ATTEMPTS} times`);
}

type Trx = Parameters<Parameters<ReturnType<Db["transaction"]>["execute"]>[0]>[0];

async function addDaily(trx: Trx, reading: Reading, date: string, cpuMs: number, gibMs: number): Promise<void> {
  if (cpuMs === 0 && gibMs === 0) return;
  await trx
    .insertInto("usage_daily")
    .values({
      team_id: reading.teamId,
      date,
      sandbox_id: reading.sandboxId,
      user_id: reading.userId,
      template: reading.template,
      cpu_ms: cpuMs,
      gib_ms: gibMs,
    })
    .onConflict((oc) =>
      oc.columns(["team_id", "date", "sandbox_id"]).doUpdateSet((eb) => ({
        cpu_ms: eb("usage_daily.cpu_ms", "+", eb.ref("excluded.cpu_ms")),
        gib_ms: eb("usage_daily.gib_ms", "+", eb.ref("excluded.gib_ms")),
      })),
    )
    .execute();
}

/** Meters of a team not yet finished: sandboxes the job must read even when the list no longer shows them. */
export async function openMeters(db: Db, teamId: string) {
  return db
    .selectFrom("usage_meters")
    .select(["sandbox_id", "user_id", "template", "status"])
    .where("team_id", "=", teamId)
    .where("final_at", "is", null)
    .execute();
}

/** Marks a meter finished without a new reading (the upstream no longer knows the sandbox). */
export async function finishMeter(db: Db, teamId: string, sandboxId: string, at: number): Promise<void> {
  await db
    .updateTable("usage_meters")
    .set({ final_at: at })
    .where("team_id", "=", teamId)
    .where("sandbox_id", "=", sandboxId)
    .where("final_at", "is", null)
    .execute();
}
