// `npm run bench -- --only usage`: the usage reading job's cost per team per run (issue 22), for 1,
// 10 and 100 teams on one instance. The upstream is a loopback HTTP server that answers the two
// calls the job makes like the engine does (GET /v1/sandboxes, one page of the team's live
// sandboxes; GET /v1/sandboxes/{id}/metrics with growing lifetime counters): real requests, real
// parsing, real bookings in the database (lib/server/usage/reader.ts readUsageOnce). Each team has
// SANDBOXES running sandboxes. The reference is the job's interval (60 s): each figure is printed
// as ms per team and as the share of the interval one run takes. SQLite, and PostgreSQL when
// DATABASE_URL or TEST_DATABASE_URL names one.
//
// The spend caps are part of every run (the job runs each team's caps right after booking its
// readings: lib/server/usage/caps-run.ts), and so of the figure: each team has CAPS_PER_TEAM caps
// (a monthly team cap that blocks and a daily member cap that pauses, neither reached, as on most
// runs: spending per window from the record, the caps' state read and written). The caps' share is
// printed beside the run (runTeamCaps alone, the same call the job makes, for the same teams).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { register } from "node:module";

register(
  "data:text/javascript," +
    encodeURIComponent(
      'export function resolve(s, c, n) { return n(s, s === "server-only" ? { ...c, conditions: [...c.conditions, "react-server"] } : c); }',
    ),
);

const TEAM_COUNTS = [1, 10, 100];
const SANDBOXES = 5;
const RUNS = 3;
const INTERVAL_MS = 60_000;
const CAPS_PER_TEAM = 2;

/** A loopback upstream: every token's account holds SANDBOXES running sandboxes whose counters grow per call. */
function fakeUpstream(): Promise<{ origin: string; close(): Promise<void> }> {
  const reads = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && url.pathname === "/v1/sandboxes") {
      const items = Array.from({ length: SANDBOXES }, (_, i) => ({
        id: `sbx_${token}_${i}`,
        status: "running",
        template: "python-3.12",
        metadata: { "baton.user": `usr_${token}`, "baton.team": token },
        created_at: "2026-12-01T00:00:00Z",
      }));
      return send(200, { items, next_cursor: null });
    }
    const m = /^\/v1\/sandboxes\/([^/]+)\/metrics$/.exec(url.pathname);
    if (req.method === "GET" && m) {
      const n = (reads.get(m[1]!) ?? 0) + 1;
      reads.set(m[1]!, n);
      return send(200, {
        sandbox_id: m[1],
        sandbox_status: "running",
        cpu: { usage_percent: 50, usage_cores: 0.5, cores: 1 },
        memory: { usage_bytes: 268435456, usage_percent: 25, limit_bytes: 1073741824 },
        lifetime: { cpu_seconds: n * 30.123, gb_seconds: n * 15.25 },
        samples: [],
      });
    }
    send(404, { code: "not_found", detail: "no such route" });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        origin: `http://127.0.0.1:${port}`,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    }),
  );
}

async function main(): Promise<void> {
  if (!process.env.TEST_DATABASE_URL && process.env.DATABASE_URL?.startsWith("postgres"))
    process.env.TEST_DATABASE_URL = process.env.DATABASE_URL;
  const { testBackends } = await import("../lib/server/db/test-backends");
  const { migrateToLatest } = await import("../lib/server/db/index");
  const { readUsageOnce } = await import("../lib/server/usage/reader");
  const { runTeamCaps } = await import("../lib/server/usage/caps-run");
  const { setCap } = await import("../lib/server/usage/caps-store");
  const { createOrkestrClient } = await import("../lib/orkestr/core");
  const upstream = await fakeUpstream();
  const summary: Record<string, unknown> = {};
  try {
    for (const backend of testBackends) {
      const t = await backend.open();
      try {
        await migrateToLatest(t.db);
        const max = Math.max(...TEAM_COUNTS);
        const teams = Array.from({ length: max }, (_, i) => `team_ub_${String(i).padStart(3, "0")}`);
        await t.db
          .insertInto("teams")
          .values(
            teams.map((id) => ({ id, name: id, slug: id.replace(/_/g, "-"), created_at: 0, spend_cap_eur: null })),
          )
          .execute();
        // Each team's member (the sandboxes' creator) and its caps: large enough never to be reached.
        await t.db
          .insertInto("users")
          .values(
            teams.map((id) => ({
              id: `usr_${id}`,
              email: `${id}@example.com`,
              email_normalized: `${id}@example.com`,
              name: id,
              password_hash: null,
              created_at: 0,
              updated_at: 0,
              disabled_at: null,
            })),
          )
          .execute();
        await t.db
          .insertInto("memberships")
          .values(teams.map((id) => ({ team_id: id, user_id: `usr_${id}`, role: "member", created_at: 0 })))
          .execute();
        for (const teamId of teams) {
          const by = `usr_${teamId}`;
          await setCap(t.db, { teamId, userId: null, window: "month", limitMicro: 1e12, action: "block", by });
          await setCap(t.db, { teamId, userId: by, window: "day", limitMicro: 1e11, action: "pause", by });
        }
        // One client per team, as teamClient() gives one per team's connection.
        const clients = new Map(
          teams.map((id) => [id, createOrkestrClient({ baseUrl: upstream.origin, token: id, maxRetries: 0 })]),
        );
        const clientFor = async (_db: unknown, teamId: string) => {
          const client = clients.get(teamId);
          return client ? { client, pauser: client, pauserUserId: null, noPauser: null } : null;
        };

        console.log(
          `\n### ${backend.name}: ${SANDBOXES} running sandboxes per team, loopback upstream; best of ${RUNS} runs\n`,
        );
        console.log(
          `Each run reads and books every team, then runs its ${CAPS_PER_TEAM} spend caps (included in "run").\n`,
        );
        console.log(
          "| Teams | run (reading + caps) | ms per team | of which caps, per team | reference (interval) | run ÷ interval | verdict |",
        );
        console.log("|---:|---:|---:|---:|---:|---:|---|");
        const results: Record<
          string,
          { run_ms: number; ms_per_team: number; caps_ms_per_team: number; share: number }
        > = {};
        for (const count of TEAM_COUNTS) {
          const subset = teams.slice(0, count);
          await readUsageOnce(t.db, { teams: subset, clientFor }); // warm: first readings
          const xs: number[] = [];
          for (let i = 0; i < RUNS; i++) {
            const s = performance.now();
            const runs = await readUsageOnce(t.db, { teams: subset, clientFor });
            xs.push(performance.now() - s);
            const failed = runs.filter((r) => r.error);
            if (failed.length) throw new Error(`${failed.length} teams failed: ${failed[0]!.error}`);
          }
          // The caps' part: the job's own call for each team, as it makes it after the readings.
          const caps: number[] = [];
          for (let i = 0; i < RUNS; i++) {
            const s = performance.now();
            for (const teamId of subset) {
              const client = clients.get(teamId)!;
              const decisions = await runTeamCaps(t.db, teamId, { pauser: client, pauserUserId: null, noPauser: null });
              if (decisions.length !== CAPS_PER_TEAM) throw new Error(`team ${teamId}: ${decisions.length} caps ran`);
              if (decisions.some((d) => d.reached)) throw new Error(`team ${teamId}: a cap was reached`);
            }
            caps.push(performance.now() - s);
          }
          const capsBest = Math.min(...caps);
          const best = Math.min(...xs);
          const share = best / INTERVAL_MS;
          results[String(count)] = {
            run_ms: Number(best.toFixed(1)),
            ms_per_team: Number((best / count).toFixed(2)),
            caps_ms_per_team: Number((capsBest / count).toFixed(2)),
            share: Number(share.toFixed(4)),
          };
          console.log(
            `| ${count} | ${best.toFixed(1)} ms | ${(best / count).toFixed(2)} ms | ${(capsBest / count).toFixed(2)} ms | ${INTERVAL_MS / 1000} s | ${(share * 100).toFixed(2)} % | ${best < INTERVAL_MS ? "fits the interval" : "OVER THE INTERVAL"} |`,
          );
        }
        summary[backend.name] = results;
      } finally {
        await t.close();
      }
    }
  } finally {
    await upstream.close();
  }
  console.log(
    `\n${JSON.stringify({
      bench: "usage-reader",
      includes: "reading, booking and the spend caps job",
      sandboxes_per_team: SANDBOXES,
      caps_per_team: CAPS_PER_TEAM,
      interval_ms: INTERVAL_MS,
      ...summary,
    })}`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
