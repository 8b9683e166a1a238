// `npm run bench -- --only audit`: the audit log's query over 100,000 rows (issue 21: p95 ≤ 100 ms on
// SQLite and PostgreSQL). Seeds 100,000 rows across 10 teams (40,000 in the team measured), then
// times each filter, the query box's syntax (parsed, then run), the first page and pages deep in the
// list (keyset cursors), as GET /api/audit runs them (lib/server/audit/query.ts), without HTTP.
// PostgreSQL is measured too when DATABASE_URL or TEST_DATABASE_URL names one (a fresh schema,
// dropped after). Prints one table per database, each figure beside the budget with the ratio.
import { register } from "node:module";

register(
  "data:text/javascript," +
    encodeURIComponent(
      'export function resolve(s, c, n) { return n(s, s === "server-only" ? { ...c, conditions: [...c.conditions, "react-server"] } : c); }',
    ),
);

const ROWS = 100_000;
const TEAMS = 10;
const MEASURED_SHARE = 0.4;
const ITERATIONS = 40;
const BUDGET_MS = 100;
const PAGE = 50;
const DAY = 24 * 60 * 60_000;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

async function main(): Promise<void> {
  if (!process.env.TEST_DATABASE_URL && process.env.DATABASE_URL?.startsWith("postgres"))
    process.env.TEST_DATABASE_URL = process.env.DATABASE_URL;
  const { testBackends } = await import("../lib/server/db/test-backends");
  const { migrateToLatest } = await import("../lib/server/db/index");
  const { queryAuditEvents } = await import("../lib/server/audit/query");
  const { parseAuditQuery } = await import("../lib/audit-query");
  const { isPostgres } = await import("../lib/server/db/util");
  const { AUDIT_ACTIONS: ACTIONS, AUDIT_TARGET_TYPES: TYPES } = await import("../lib/audit-actions");
  const { sql } = await import("kysely");
  const summary: Record<string, unknown> = {};

  for (const backend of testBackends) {
    const t = await backend.open();
    try {
      const db = t.db;
      await migrateToLatest(db);
      const now = Date.UTC(2026, 11, 1);
      const team = (i: number) => `team_bench_${i}`;
      const measured = team(0);
      let seeded = 0;
      const t0 = performance.now();
      const batch = 500;
      for (let start = 0; start < ROWS; start += batch) {
        const rows = [];
        for (let i = start; i < Math.min(ROWS, start + batch); i++) {
          // Deterministic spread: 40% in the measured team, the rest over the others.
          const teamIx = i % 10 < MEASURED_SHARE * 10 ? 0 : 1 + (i % (TEAMS - 1));
          const r = (i * 2654435761) >>> 0;
          rows.push({
            id: `aud_${String(i).padStart(10, "0")}`,
            team_id: team(teamIx),
            user_id: `usr_${(r >>> 16) % 50}`,
            actor_email: `person${(r >>> 16) % 50}@example.test`,
            credential: "session",
            action: ACTIONS[r % ACTIONS.length]!,
            target: null,
            target_type: TYPES[(r >>> 5) % TYPES.length]!,
            target_id: `id_${(r >>> 8) % 2000}`,
            result: (r >>> 12) % 20 === 0 ? "forbidden" : (r >>> 12) % 20 === 1 ? "not_found" : "ok",
            data: JSON.stringify({ before: { n: i }, after: { n: i + 1 } }),
            ip: "192.0.2.1",
            user_agent: "Mozilla/5.0 (bench)",
            request_id: `req_${i}`,
            created_at: now - Math.floor(((r >>> 3) % (365 * 24 * 60)) * 60_000),
          });
        }
        await db.insertInto("audit_events").values(rows).execute();
        seeded += rows.length;
      }
      const seedMs = performance.now() - t0;
      // PostgreSQL's autovacuum analyses a table this size on its own; do it now rather than wait.
      if (isPostgres(db)) await sql`analyze audit_events`.execute(db);

      const deep = await db
        .selectFrom("audit_events")
        .select(["created_at", "id"])
        .where("team_id", "=", measured)
        .orderBy("created_at", "desc")
        .orderBy("id", "desc")
        .offset(30_000)
        .limit(1)
        .executeTakeFirstOrThrow();
      const { encodeAuditCursor } = await import("../lib/server/audit/query");
      const deepCursor = encodeAuditCursor({ createdAt: new Date(deep.created_at), id: deep.id });
      const month = new Date(now - 60 * DAY).toISOString().slice(0, 10);
      const monthEnd = new Date(now - 31 * DAY).toISOString().slice(0, 10);

      const cases: Record<string, () => Promise<unknown>> = {
        "first page, no filter": () => queryAuditEvents(db, { teamId: measured, filter: {}, limit: PAGE }),
        "action filter": () =>
          queryAuditEvents(db, { teamId: measured, filter: { action: "sandbox.terminate" }, limit: PAGE }),
        "actor filter": () =>
          queryAuditEvents(db, { teamId: measured, filter: { actor: "person7@example.test" }, limit: PAGE }),
        "target type + id": () =>
          queryAuditEvents(db, { teamId: measured, filter: { targetType: "sandbox", targetId: "id_42" }, limit: PAGE }),
        "result filter (rare: forbidden)": () =>
          queryAuditEvents(db, { teamId: measured, filter: { result: "forbidden" }, limit: PAGE }),
        "date range (one month)": () =>
          queryAuditEvents(db, { teamId: measured, filter: { dateFrom: month, dateTo: monthEnd }, limit: PAGE }),
        "q: action + actor + result": () => {
          const p = parseAuditQuery("action:sandbox.create actor:person3@example.test result:ok");
          if (!p.ok) throw new Error(p.error);
          return queryAuditEvents(db, { teamId: measured, filter: p.filter, limit: PAGE });
        },
        "deep page (30,000 rows in)": () =>
          queryAuditEvents(db, { teamId: measured, filter: {}, cursor: deepCursor, limit: PAGE }),
        "deep page, action filter": () =>
          queryAuditEvents(db, {
            teamId: measured,
            filter: { action: "sandbox.pause" },
            cursor: deepCursor,
            limit: PAGE,
          }),
      };

      console.log(
        `\n### ${backend.name}: ${seeded.toLocaleString("en")} rows in ${TEAMS} teams (${Math.round(ROWS * MEASURED_SHARE).toLocaleString("en")} in the team measured), seeded in ${(seedMs / 1000).toFixed(1)} s; ${ITERATIONS} runs each, pages of ${PAGE}\n`,
      );
      console.log("| Query | rows | p50 | p95 | budget (p95) | p95 ÷ budget | verdict |");
      console.log("|---|---:|---:|---:|---:|---:|---|");
      const results: Record<string, { p50: number; p95: number }> = {};
      for (const [name, run] of Object.entries(cases)) {
        await run(); // warm
        const xs: number[] = [];
        let rows = 0;
        for (let i = 0; i < ITERATIONS; i++) {
          const s = performance.now();
          const r = (await run()) as { items: unknown[] };
          xs.push(performance.now() - s);
          rows = r.items.length;
        }
        const p50 = pct(xs, 50);
        const p95 = pct(xs, 95);
        results[name] = { p50: Number(p50.toFixed(2)), p95: Number(p95.toFixed(2)) };
        console.log(
          `| ${name} | ${rows} | ${p50.toFixed(1)} ms | ${p95.toFixed(1)} ms | ${BUDGET_MS} ms | ${(p95 / BUDGET_MS).toFixed(3)}× | ${p95 <= BUDGET_MS ? "within budget" : "OVER BUDGET"} |`,
        );
      }
      summary[backend.name] = results;
    } finally {
      await t.close();
    }
  }
  console.log(`\n${JSON.stringify({ bench: "audit-query-100k", rows: ROWS, budget_ms: BUDGET_MS, ...summary })}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
