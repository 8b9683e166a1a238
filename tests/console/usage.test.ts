import "server-only";
import { describe, expect, it } from "vitest";
import { POST as localEngine } from "../../app/api/connections/local-engine/route";
import { GET as usageReport } from "../../app/api/usage/route";
import { GET as getRates, PATCH as patchRates } from "../../app/api/usage/rates/route";
import { DELETE as terminate } from "../../app/api/v1/sandboxes/[id]/route";
import { POST as execIn } from "../../app/api/v1/sandboxes/[id]/exec/route";
import { GET as metricsOf } from "../../app/api/v1/sandboxes/[id]/metrics/route";
import { POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { GET as getSandbox } from "../../app/api/v1/sandboxes/[id]/route";
import { listAuditEvents } from "../../lib/server/db/audit";
import { setCap } from "../../lib/server/usage/caps-store";
import { GET as engineUsage } from "../../app/api/v1/sandboxes/usage/route";
import { addMember } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { createUser } from "../../lib/server/db/users";
import type { Role } from "../../lib/server/db/schema";
import { settleFinalReadings } from "../../lib/server/usage/final-reading";
import { readUsageOnce } from "../../lib/server/usage/reader";
import { bookReading } from "../../lib/server/usage/record";
import { MICRO_PER_EUR, type UsageReport } from "../../lib/usage/report";
import { useLocalEngine } from "./engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, uniq, useConsoleDb } from "./helpers";

// Baton's own usage record against the real local engine (issue 22): known work (`yes > /dev/null`
// for a measured time) is read by the job, the sandbox is terminated through Baton (the final
// reading), and Baton's report equals the engine's GET /v1/sandboxes/usage to the cent. Booking
// (lib/server/usage/record.test.ts) is proven on both dialects; the engine run here on SQLite.

const params = (p: Record<string, string>) => ({ params: Promise.resolve(p) });
const today = () => new Date().toISOString().slice(0, 10);

interface EngineUsage {
  totals: { cpu_seconds: number; gb_seconds: number; cost_eur: number };
  series: { date: string; cpu_seconds: number; gb_seconds: number; cost_eur: number }[];
  by_sandbox: { id: string; cpu_seconds: number; gb_seconds: number; cost_eur: number }[];
}

describe.each(testBackends.slice(0, 1))("Baton's usage record on $name, against the local engine", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  /** A team whose owner, admin, member and viewer are each but the viewer connected to its local-engine account. */
  async function team() {
    const { user: owner, teamId } = await makeUser(ctx.db(), "owner");
    const people: Record<string, { id: string; cookie: string }> = {};
    for (const role of ["owner", "admin", "member", "viewer"] as Role[]) {
      const user =
        role === "owner"
          ? owner
          : await createUser(ctx.db(), { email: `${uniq(role)}@example.com`, passwordHash: null });
      if (role !== "owner") await addMember(ctx.db(), { teamId: teamId!, userId: user.id, role });
      const { cookie } = await sessionCookie(ctx.db(), user.id);
      // A viewer may not mint an engine token (403): the report needs none, it reads Baton's record.
      const res = await localEngine(request("/api/connections/local-engine", { method: "POST", cookie }), noParams);
      expect(res.status).toBe(role === "viewer" ? 403 : 201);
      people[role] = { id: user.id, cookie };
    }
    return {
      teamId: teamId!,
      ...(people as Record<"owner" | "admin" | "member" | "viewer", { id: string; cookie: string }>),
    };
  }

  async function report(cookie: string, query = ""): Promise<{ status: number; body: UsageReport }> {
    const res = await usageReport(request(`/api/usage${query}`, { cookie }), noParams);
    return { status: res.status, body: (await res.json()) as UsageReport };
  }

  it("books known work, and Baton's report equals the engine's usage API to the cent", async () => {
    const t = await team();
    const made = await createSandbox(
      request("/api/v1/sandboxes", { method: "POST", cookie: t.owner.cookie, body: { template: "python-3.12" } }),
      noParams,
    );
    expect(made.status).toBe(201);
    const id = ((await jsonOf(made)) as { id: string }).id;

    // Known work: `yes` on one CPU for a measured few seconds.
    const started = Date.now();
    const ran = await execIn(
      request(`/api/v1/sandboxes/${id}/exec`, {
        method: "POST",
        cookie: t.owner.cookie,
        body: { command: "timeout 3 sh -c 'yes > /dev/null'; true", timeout_seconds: 20 },
      }),
      params({ id }),
    );
    expect(ran.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);

    // The job reads the team's counters: the sandbox is booked for its creator.
    const [run] = await readUsageOnce(ctx.db(), { teams: [t.teamId] });
    expect(run).toMatchObject({ teamId: t.teamId, error: null });
    expect(run!.read).toBeGreaterThanOrEqual(1);
    const meter = await ctx
      .db()
      .selectFrom("usage_meters")
      .selectAll()
      .where("sandbox_id", "=", id)
      .executeTakeFirstOrThrow();
    expect(meter.user_id).toBe(t.owner.id);
    expect(Number(meter.cpu_ms)).toBeGreaterThan(500); // two shared cores: not a full 3 s guaranteed

    // Terminate through Baton: the final reading is booked (in the background, awaited here).
    const gone = await terminate(
      request(`/api/v1/sandboxes/${id}`, { method: "DELETE", cookie: t.owner.cookie }),
      params({ id }),
    );
    expect(gone.status).toBeLessThan(300);
    await settleFinalReadings();
    const final = await ctx
      .db()
      .selectFrom("usage_meters")
      .selectAll()
      .where("sandbox_id", "=", id)
      .executeTakeFirstOrThrow();
    expect(final.final_at).not.toBeNull();
    expect(final.status).toBe("terminated");

    // A second reading with no new usage, and a replay of the last one, book nothing.
    const m = await metricsOf(request(`/api/v1/sandboxes/${id}/metrics`, { cookie: t.owner.cookie }), params({ id }));
    const lifetime = ((await m.json()) as { lifetime: { cpu_seconds: number; gb_seconds: number } }).lifetime;
    const again = {
      teamId: t.teamId,
      sandboxId: id,
      cpuSeconds: lifetime.cpu_seconds,
      gibSeconds: lifetime.gb_seconds,
      at: Date.now() + 1000,
      userId: t.owner.id,
      template: "python-3.12",
      status: "terminated",
      final: true,
    };
    expect(await bookReading(ctx.db(), again)).toMatchObject({ cpuMs: 0, gibMs: 0 });
    expect(await bookReading(ctx.db(), again)).toMatchObject({ cpuMs: 0, gibMs: 0 });
    const reruns = await readUsageOnce(ctx.db(), { teams: [t.teamId] });
    expect(reruns[0]!.read).toBe(0); // nothing live, no open meter

    // Baton's report and the engine's, for the same days.
    const day = today();
    const ours = await report(t.owner.cookie, `?from=${day}&to=${day}`);
    expect(ours.status).toBe(200);
    const res = await engineUsage(
      request(`/api/v1/sandboxes/usage?from=${day}&to=${day}`, { cookie: t.owner.cookie }),
      noParams,
    );
    expect(res.status).toBe(200);
    const theirs = (await res.json()) as EngineUsage;
    const eur = (micro: number) => micro / MICRO_PER_EUR;

    expect(ours.body.scope).toBe("team");
    expect(theirs.totals.cost_eur).toBeGreaterThan(0);
    expect(Math.abs(eur(ours.body.totals.cost_micro) - theirs.totals.cost_eur)).toBeLessThan(0.005);
    expect(Math.abs(ours.body.totals.cpu_seconds - theirs.totals.cpu_seconds)).toBeLessThan(0.002);
    expect(Math.abs(ours.body.totals.gib_seconds - theirs.totals.gb_seconds)).toBeLessThan(0.002);
    // Closer than the cent: to the micro-euro's rounding.
    expect(Math.abs(eur(ours.body.totals.cost_micro) - theirs.totals.cost_eur)).toBeLessThan(0.000002);

    const ourDay = ours.body.days.find((d) => d.date === day)!;
    const theirDay = theirs.series.find((d) => d.date === day)!;
    expect(Math.abs(eur(ourDay.cost_micro) - theirDay.cost_eur)).toBeLessThan(0.005);
    expect(ourDay.by_member[t.owner.id]).toBe(ourDay.cost_micro);

    const ourRow = ours.body.sandboxes.find((s) => s.id === id)!;
    const theirRow = theirs.by_sandbox.find((s) => s.id === id)!;
    expect(Math.abs(eur(ourRow.cost_micro) - theirRow.cost_eur)).toBeLessThan(0.005);
    expect(Math.abs(ourRow.cpu_seconds - theirRow.cpu_seconds)).toBeLessThan(0.002);
    expect(ourRow).toMatchObject({ user_id: t.owner.id, template: "python-3.12", status: "terminated" });
    expect(ours.body.members.find((mb) => mb.user_id === t.owner.id)).toMatchObject({
      cost_micro: ours.body.totals.cost_micro,
      sandboxes: 1,
    });
    expect(ours.body.last_reading_at).not.toBeNull();
    expect(ours.body.month.so_far_micro).toBeGreaterThanOrEqual(ours.body.totals.cost_micro);

    // A member and a viewer see their own usage ("self": none) and the team's total.
    for (const who of [t.member, t.viewer]) {
      const mine = await report(who.cookie, `?from=${day}&to=${day}`);
      expect(mine.status).toBe(200);
      expect(mine.body.scope).toBe("self");
      expect(mine.body.totals.cost_micro).toBe(0);
      expect(mine.body.sandboxes).toEqual([]);
      expect(mine.body.members.map((mb) => mb.user_id)).toEqual([who.id]);
      expect(mine.body.team_totals.cost_micro).toBe(ours.body.totals.cost_micro);
    }
    // An admin sees everyone's.
    expect((await report(t.admin.cookie, `?from=${day}&to=${day}`)).body).toMatchObject({
      scope: "team",
      totals: { cost_micro: ours.body.totals.cost_micro },
    });

    // A viewer of another team gets nothing of this one.
    const other = await team();
    const theirsB = await report(other.viewer.cookie, `?from=${day}&to=${day}`);
    expect(theirsB.status).toBe(200);
    expect(theirsB.body.team_totals.cost_micro).toBe(0);
    expect(JSON.stringify(theirsB.body)).not.toContain(id);
    const ownerB = await report(other.owner.cookie, `?from=${day}&to=${day}`);
    expect(ownerB.body.sandboxes).toEqual([]);
  }, 120_000);

  it("a member's tiny pause cap, crossed by real work, pauses their sandbox at the job's run and refuses their next create; others go on", async () => {
    const t = await team();
    const made = async (cookie: string) => {
      const res = await createSandbox(
        request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "python-3.12" } }),
        noParams,
      );
      return { status: res.status, body: (await jsonOf(res)) as { id: string; code?: string; detail?: string } };
    };
    const mine = (await made(t.member.cookie)).body.id;
    const theirs = (await made(t.admin.cookie)).body.id;
    await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: t.member.id,
      window: "day",
      limitMicro: 0,
      action: "pause",
      by: t.owner.id,
    });
    const ran = await execIn(
      request(`/api/v1/sandboxes/${mine}/exec`, {
        method: "POST",
        cookie: t.member.cookie,
        body: { command: "timeout 1 sh -c 'yes > /dev/null'; true", timeout_seconds: 20 },
      }),
      params({ id: mine }),
    );
    expect(ran.status).toBe(200);
    await readUsageOnce(ctx.db(), { teams: [t.teamId] });
    const status = async (id: string, cookie: string) =>
      (
        (await jsonOf(await getSandbox(request(`/api/v1/sandboxes/${id}`, { cookie }), params({ id })))) as {
          status: string;
        }
      ).status;
    expect(await status(mine, t.member.cookie)).toBe("paused");
    expect(await status(theirs, t.admin.cookie)).toBe("running");
    const refused = await made(t.member.cookie);
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({
      code: "spend_cap_reached",
      detail: expect.stringContaining("Your daily spend cap"),
    });
    const allowed = await made(t.admin.cookie);
    expect(allowed.status).toBe(201);
    const events = await listAuditEvents(ctx.db(), { teamId: t.teamId });
    expect(events.find((e) => e.action === "spend_cap.pause")).toMatchObject({ data: { paused: [mine] } });
    for (const [id, cookie] of [
      [mine, t.member.cookie],
      [theirs, t.admin.cookie],
      [allowed.body.id, t.admin.cookie],
    ] as const)
      await terminate(request(`/api/v1/sandboxes/${id}`, { method: "DELETE", cookie }), params({ id }));
    await settleFinalReadings();
  }, 60_000);

  it("validates the range with clear 422s; defaults to this UTC month", async () => {
    const t = await team();
    const month = await report(t.viewer.cookie);
    expect(month.status).toBe(200);
    expect(month.body.from).toBe(`${today().slice(0, 7)}-01`);
    expect(month.body.days.length).toBeGreaterThanOrEqual(28);
    expect(month.body.month.ends_at.slice(8, 19)).toBe("01T00:00:00");
    for (const q of [
      "?from=2030-02-01&to=2030-01-01",
      "?from=2030-01-01&to=2031-06-01",
      "?from=2030-02-30",
      "?to=tomorrow",
    ]) {
      const res = await report(t.owner.cookie, q);
      expect(res.status, q).toBe(422);
      expect((res.body as unknown as { code: string }).code).toBe("validation_error");
    }
  });

  it("rate card: read by everyone, changed by the owner only, validated and audited", async () => {
    const t = await team();
    const read = await getRates(request("/api/usage/rates", { cookie: t.viewer.cookie }), noParams);
    expect(await read.json()).toMatchObject({ vcpu_hour_micro: 45_000, gib_hour_micro: 15_000, free_storage_gb: 10 });
    const patch = (cookie: string, body: object) =>
      patchRates(request("/api/usage/rates", { method: "PATCH", cookie, body }), noParams);
    expect((await patch(t.admin.cookie, { vcpu_hour_micro: 90_000 })).status).toBe(403);
    expect((await patch(t.member.cookie, { vcpu_hour_micro: 90_000 })).status).toBe(403);
    for (const bad of [{ vcpu_hour_micro: -1 }, { gib_hour_micro: 1.5 }, { free_storage_gb: 10 ** 9 }, {}, { x: 1 }])
      expect((await patch(t.owner.cookie, bad)).status, JSON.stringify(bad)).toBe(422);
    const ok = await patch(t.owner.cookie, { vcpu_hour_micro: 90_000 });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ vcpu_hour_micro: 90_000, gib_hour_micro: 15_000, updated_by: t.owner.id });
    expect((await report(t.member.cookie)).body.rates.vcpu_hour_micro).toBe(90_000);
    const entry = await ctx
      .db()
      .selectFrom("audit_events")
      .selectAll()
      .where("team_id", "=", t.teamId)
      .where("action", "=", "usage.rates_update")
      .execute();
    expect(entry.map((e) => e.result)).toContain("ok");
    const data = JSON.parse(String(entry.find((e) => e.result === "ok")!.data)) as {
      before: { vcpu_hour_micro: number };
      after: { vcpu_hour_micro: number };
    };
    expect([data.before.vcpu_hour_micro, data.after.vcpu_hour_micro]).toEqual([45_000, 90_000]);
    // The refusals are audited under the same action.
    expect(entry.filter((e) => e.result === "forbidden").length).toBeGreaterThanOrEqual(2);
  });
});
