import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { parseAuditQuery, type AuditFilter } from "../../audit-query";
import { listAuditEvents, recordAudit } from "../db/audit";
import { migrateToLatest, type Db } from "../db/index";
import { createTeamWithOwner, deleteTeam } from "../db/teams";
import { testBackends, type TestDatabase } from "../db/test-backends";
import { createUser, deleteUser } from "../db/users";
import { queryAuditEvents, allAuditEvents } from "./query";
import { applyAuditRetention } from "./retention";
import { updateAuditSettings } from "./stream";

// The audit log's storage, on SQLite and PostgreSQL: append-only in the database itself (only the
// retention transaction deletes), rows that outlive their team and user, retention that records
// itself, and the filtered, keyset-paged query (the query box and the controls give the same rows).

const DAY = 24 * 60 * 60_000;
let n = 0;
const email = () => `audit-${++n}-${Math.random().toString(36).slice(2, 7)}@example.test`;

for (const backend of testBackends) {
  describe(`audit log on ${backend.name}`, () => {
    let t: TestDatabase;
    let db: Db;
    beforeAll(async () => {
      t = await backend.open();
      db = t.db;
      await migrateToLatest(db);
    });
    afterAll(async () => t.close());

    async function team() {
      const owner = await createUser(db, { email: email(), passwordHash: null });
      const { team } = await createTeamWithOwner(db, {
        name: "Audit",
        slug: `a-${++n}-${Date.now()}`,
        ownerId: owner.id,
      });
      return { owner, team };
    }

    it("refuses UPDATE and DELETE of audit rows outside retention", async () => {
      const { owner, team: tm } = await team();
      const e = await recordAudit(db, {
        action: "sandbox.create",
        teamId: tm.id,
        userId: owner.id,
        targetId: "sbx_1",
        targetType: "sandbox",
      });
      await expect(
        db.updateTable("audit_events").set({ action: "sandbox.pause" }).where("id", "=", e.id).execute(),
      ).rejects.toThrow(/append-only/);
      await expect(db.deleteFrom("audit_events").where("id", "=", e.id).execute()).rejects.toThrow(/append-only/);
      await expect(sql`delete from audit_events`.execute(db)).rejects.toThrow(/append-only/);
      if (backend.name === "postgres") {
        await expect(sql`truncate audit_events`.execute(db)).rejects.toThrow(/append-only/);
        // The purge switch is transaction-local: set outside one, it does not stick.
        await sql`select set_config('baton.audit_purge', 'on', true)`.execute(db);
        await expect(db.deleteFrom("audit_events").where("id", "=", e.id).execute()).rejects.toThrow(/append-only/);
      }
      const still = await db.selectFrom("audit_events").select(["action"]).where("id", "=", e.id).executeTakeFirst();
      expect(still?.action).toBe("sandbox.create");
      expect(e).toMatchObject({
        actorEmail: owner.email.toLowerCase(),
        result: "ok",
        targetType: "sandbox",
        targetId: "sbx_1",
        target: "sbx_1",
      });
    });

    it("keeps rows after their team and their user are deleted", async () => {
      const { owner, team: tm } = await team();
      const e = await recordAudit(db, { action: "team.update", teamId: tm.id, userId: owner.id });
      expect(await deleteTeam(db, tm.id)).toBe(true);
      expect(await deleteUser(db, owner.id)).toBe(true);
      const [kept] = await listAuditEvents(db, { teamId: tm.id });
      expect(kept).toMatchObject({ id: e.id, userId: owner.id, actorEmail: owner.email.toLowerCase() });
    });

    it("applies retention per team (default 365 days), and records each purge with its count", async () => {
      const now = Date.UTC(2027, 5, 1);
      const a = await team();
      const b = await team();
      await updateAuditSettings(db, b.team.id, { retentionDays: 30 }, { now });
      for (const [tm, ages] of [
        [a.team.id, [400, 366, 10]],
        [b.team.id, [40, 31, 5]],
      ] as const)
        for (const age of ages) await recordAudit(db, { action: "sandbox.create", teamId: tm, now: now - age * DAY });
      const result = await applyAuditRetention(db, now);
      expect(result).toEqual(
        expect.arrayContaining([
          { teamId: a.team.id, deleted: 2 },
          { teamId: b.team.id, deleted: 2 },
        ]),
      );
      const left = async (id: string) => (await queryAuditEvents(db, { teamId: id, filter: {} })).items;
      const aLeft = await left(a.team.id);
      expect(aLeft.map((e) => e.action)).toEqual(["audit.purge", "sandbox.create"]);
      expect(aLeft[0]).toMatchObject({ credential: "housekeeping", data: { count: 2, retention_days: 365 } });
      expect((await left(b.team.id))[0]).toMatchObject({
        action: "audit.purge",
        data: { count: 2, retention_days: 30 },
      });
      // Nothing more to purge: no new purge rows.
      expect(
        (await applyAuditRetention(db, now)).filter((r) => r.teamId === a.team.id || r.teamId === b.team.id),
      ).toEqual([]);
      // The permit is gone with its transaction: a plain delete is refused again.
      await expect(db.deleteFrom("audit_events").where("team_id", "=", a.team.id).execute()).rejects.toThrow(
        /append-only/,
      );
    });

    it("filters, pages by (created_at, id) without gaps or repeats, and the query box gives the same rows", async () => {
      const { owner, team: tm } = await team();
      const other = await createUser(db, { email: email(), passwordHash: null });
      const base = Date.UTC(2026, 0, 1, 12);
      for (let i = 0; i < 45; i++) {
        await recordAudit(db, {
          action: i % 3 === 0 ? "sandbox.terminate" : "sandbox.create",
          teamId: tm.id,
          userId: i % 2 === 0 ? owner.id : other.id,
          targetType: "sandbox",
          targetId: `sbx_${i % 5}`,
          result: i % 7 === 0 ? "forbidden" : "ok",
          // Several rows share a millisecond: the id breaks the tie.
          now: base + Math.floor(i / 3) * DAY,
        });
      }
      // A row of another team never shows.
      const stranger = await team();
      await recordAudit(db, { action: "sandbox.terminate", teamId: stranger.team.id, userId: owner.id });

      const all = await collect(tm.id, {});
      expect(all).toHaveLength(45);
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<typeof queryAuditEvents>> = await queryAuditEvents(db, {
          teamId: tm.id,
          filter: {},
          cursor,
          limit: 7,
        });
        paged.push(...page.items.map((e) => e.id));
        cursor = page.nextCursor;
      } while (cursor);
      expect(paged).toEqual(all);

      const cases: [string, AuditFilter][] = [
        ["action:sandbox.terminate", { action: "sandbox.terminate" }],
        [`actor:${owner.email.toUpperCase()}`, { actor: owner.email }],
        [`actor:${other.id}`, { actor: other.id }],
        ["resource_type:sandbox resource_id:sbx_3", { targetType: "sandbox", targetId: "sbx_3" }],
        ["result:forbidden", { result: "forbidden" }],
        ["date_from:2026-01-03 date_to:2026-01-05", { dateFrom: "2026-01-03", dateTo: "2026-01-05" }],
        [
          `action:sandbox.create actor:${owner.email} result:ok`,
          { action: "sandbox.create", actor: owner.email, result: "ok" },
        ],
      ];
      for (const [q, controls] of cases) {
        const parsed = parseAuditQuery(q);
        if (!parsed.ok) throw new Error(parsed.error);
        const byQuery = await collect(tm.id, parsed.filter);
        const byControls = await collect(tm.id, controls);
        expect(byQuery, q).toEqual(byControls);
        expect(byQuery.length, q).toBeGreaterThan(0);
        expect(byQuery.length, q).toBeLessThan(45);
      }
      // Exactly the expected rows for one of them, checked against the data.
      const terminated = await Promise.all((await collect(tm.id, { action: "sandbox.terminate" })).map((id) => id));
      expect(terminated).toHaveLength(15);
      expect(await collect(tm.id, { dateFrom: "2026-01-03", dateTo: "2026-01-03" })).toHaveLength(3);
    });

    async function collect(teamId: string, filter: AuditFilter): Promise<string[]> {
      const ids: string[] = [];
      for await (const e of allAuditEvents(db, teamId, filter, 10)) ids.push(e.id);
      return ids;
    }
  });
}
