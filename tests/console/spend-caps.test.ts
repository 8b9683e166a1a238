import "server-only";
import { describe, expect, it } from "vitest";
import { DELETE as deleteCapRoute } from "../../app/api/usage/caps/[id]/route";
import { GET as listCapsRoute, PUT as putCap } from "../../app/api/usage/caps/route";
import { POST as resumeSandbox } from "../../app/api/v1/sandboxes/[id]/resume/route";
import { DELETE as terminateSandbox, PATCH as patchSandbox } from "../../app/api/v1/sandboxes/[id]/route";
import { POST as setTimeoutRoute } from "../../app/api/v1/sandboxes/[id]/timeout/route";
import { POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { POST as createTemplate } from "../../app/api/v1/templates/route";
import { listAuditEvents } from "../../lib/server/db/audit";
import { connectLocalEngine } from "../../lib/server/tokens";
import { useLocalEngine } from "./engine-harness";
import { addMember, getTeam, updateTeam } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import type { ActingTeam } from "../../lib/server/acting-team";
import { assertUnderCaps, reachedCap } from "../../lib/server/usage/cap-check";
import { capMeterFor } from "../../lib/server/usage/cap-meter";
import { enforceTeamCaps, type CapAlert, type CapsJobDeps } from "../../lib/server/usage/caps-job";
import { setCap } from "../../lib/server/usage/caps-store";
import { SEED_RATES } from "../../lib/usage/report";
import { possibleOvershootMicro, windowBounds, windowKey } from "../../lib/usage/caps";
import { jsonOf, makeUser, noParams, request, sessionCookie, useConsoleDb } from "./helpers";

// Spend caps without an engine: the caps job reads spending through an injected source (the usage
// record's query in production) and pauses through an injected pauser (the team's connection), so
// these tests drive the figures exactly. The end-to-end path (the real engine, `yes`, the real
// pause) is e2e's.

const NOW = Date.parse("2026-12-15T12:00:00Z");

describe.each(testBackends)("spend caps on $name", (backend) => {
  const ctx = useConsoleDb(backend);

  /** A team with an owner, an admin and a member, each with a session cookie scoped to the team. */
  async function team() {
    const owner = await makeUser(ctx.db(), "owner");
    const teamId = owner.teamId!;
    const slug = (await getTeam(ctx.db(), teamId))!.slug;
    const add = async (role: "admin" | "member" | "viewer") => {
      const u = await makeUser(ctx.db(), null);
      await addMember(ctx.db(), { teamId, userId: u.user.id, role });
      return u.user;
    };
    const admin = await add("admin");
    const member = await add("member");
    const other = await add("member");
    const cookie = async (userId: string) => (await sessionCookie(ctx.db(), userId)).cookie;
    const headers = { "x-baton-team": slug };
    const put = async (userId: string, body: object) =>
      putCap(request("/api/usage/caps", { method: "PUT", cookie: await cookie(userId), headers, body }), noParams);
    const list = async (userId: string) =>
      jsonOf(await listCapsRoute(request("/api/usage/caps", { cookie: await cookie(userId), headers }), noParams));
    const acting = async (userId: string, role: ActingTeam["role"]): Promise<ActingTeam> => ({
      userId,
      role,
      team: (await getTeam(ctx.db(), teamId))!,
      connection: null,
      noConnection: "none",
    });
    return { teamId, owner: owner.user, admin, member, other, put, list, cookie, headers, acting };
  }

  function deps(spend: { team: number; byUser?: Record<string, number> }) {
    const alerts: CapAlert[] = [];
    const pauses: (string | null)[] = [];
    const d: CapsJobDeps = {
      spend: async () => ({ team: spend.team, byUser: new Map(Object.entries(spend.byUser ?? {})) }),
      pause: async (_teamId, userId) => {
        pauses.push(userId);
        return { paused: ["sbx_running"], failed: [] };
      },
      notify: async (alert) => {
        alerts.push(alert);
        return { email: "sent" };
      },
    };
    return { d, alerts, pauses };
  }

  it("owners set caps; admins only when the owners allow it; members never; every change audited", async () => {
    const t = await team();
    const body = { window: "month", limit_micro: 10_000_000, action: "block" };
    expect((await t.put(t.member.id, body)).status).toBe(403);
    const refused = await t.put(t.admin.id, body);
    expect(refused.status).toBe(403);
    expect(await jsonOf(refused)).toMatchObject({
      code: "forbidden",
      detail: expect.stringContaining("billing.manage"),
    });
    expect((await t.put(t.owner.id, body)).status).toBe(200);
    await updateTeam(ctx.db(), t.teamId, { adminsManageBilling: true });
    const raised = await t.put(t.admin.id, { ...body, limit_micro: 20_000_000 });
    expect(raised.status).toBe(200);
    expect(await jsonOf(raised)).toMatchObject({
      scope: "team",
      can_manage: true,
      raisers: "the team's owners and admins",
      caps: [{ user_id: null, window: "month", limit_micro: 20_000_000, action: "block", spent_micro: null }],
    });
    const events = (await listAuditEvents(ctx.db(), { teamId: t.teamId })).filter((e) => e.action === "spend_cap.set");
    expect(events.map((e) => e.result).sort()).toEqual(["forbidden", "forbidden", "ok", "ok"]);
    expect(events.find((e) => e.userId === t.admin.id && e.result === "ok")).toMatchObject({
      targetType: "spend_cap",
      data: {
        before: { subject: "team", limit_micro: 10_000_000 },
        after: { subject: "team", limit_micro: 20_000_000 },
      },
    });
  });

  it("a member's cap is no higher than the team's, the team's no lower than a member's; bad input is 422", async () => {
    const t = await team();
    await t.put(t.owner.id, { window: "month", limit_micro: 10_000_000, action: "block" });
    const over = await t.put(t.owner.id, {
      user_id: t.member.id,
      window: "month",
      limit_micro: 10_010_000,
      action: "block",
    });
    expect(over.status).toBe(422);
    expect(await jsonOf(over)).toMatchObject({
      code: "cap_conflict",
      detail: "A member's monthly cap (€10.01) cannot be higher than the team's (€10.00).",
    });
    expect(
      (await t.put(t.owner.id, { user_id: t.member.id, window: "month", limit_micro: 5_000_000, action: "pause" }))
        .status,
    ).toBe(200);
    const below = await t.put(t.owner.id, { window: "month", limit_micro: 4_000_000, action: "block" });
    expect(below.status).toBe(422);
    expect(await jsonOf(below)).toMatchObject({ code: "cap_conflict" });
    for (const bad of [
      { window: "week", limit_micro: 1_000_000, action: "block" },
      { window: "month", limit_micro: 1_000_001, action: "block" },
      { window: "month", limit_micro: -10_000, action: "block" },
      { window: "month", limit_micro: 1.5, action: "block" },
      { window: "month", limit_micro: 1_000_000, action: "terminate" },
    ])
      expect((await t.put(t.owner.id, bad)).status, JSON.stringify(bad)).toBe(422);
    const stranger = await makeUser(ctx.db(), "owner");
    const notMember = await t.put(t.owner.id, {
      user_id: stranger.user.id,
      window: "month",
      limit_micro: 1_000_000,
      action: "block",
    });
    expect(notMember.status).toBe(404);
  });

  it("members see the team's cap and their own; admins see everyone's", async () => {
    const t = await team();
    await t.put(t.owner.id, { window: "month", limit_micro: 10_000_000, action: "block" });
    await t.put(t.owner.id, { user_id: t.member.id, window: "month", limit_micro: 5_000_000, action: "block" });
    await t.put(t.owner.id, { user_id: t.other.id, window: "day", limit_micro: 1_000_000, action: "alert" });
    const mine = await t.list(t.member.id);
    expect(mine).toMatchObject({ scope: "self", can_manage: false });
    expect((mine.caps as { user_id: string | null }[]).map((c) => c.user_id).sort()).toEqual(
      [null, t.member.id].sort(),
    );
    const all = await t.list(t.admin.id);
    expect(all).toMatchObject({ scope: "team", can_manage: false });
    expect((all.caps as unknown[]).length).toBe(3);
  });

  it("each cap says its run-rate, what could be spent before the job's next run, and when its window resets", async () => {
    const t = await team();
    await t.put(t.owner.id, { window: "day", limit_micro: 10_000_000, action: "block" });
    await t.put(t.owner.id, { user_id: t.member.id, window: "month", limit_micro: 5_000_000, action: "pause" });
    const now = Date.now();
    // Two running sandboxes (the member's and another's), each read twice a minute apart: one
    // vCPU-second per second is the seed's vCPU-hour price per hour; a paused one costs nothing.
    const meter = (sandbox_id: string, user_id: string, status: string) => ({
      team_id: t.teamId,
      sandbox_id,
      user_id,
      template: null,
      status,
      cpu_ms: 120_000,
      gib_ms: 0,
      read_at: now - 1000,
      prev_cpu_ms: 60_000,
      prev_gib_ms: 0,
      prev_read_at: now - 61_000,
      final_at: null,
    });
    await ctx
      .db()
      .insertInto("usage_meters")
      .values([
        meter("sbx_a", t.member.id, "running"),
        meter("sbx_b", t.other.id, "running"),
        meter("sbx_c", t.member.id, "paused"),
      ])
      .execute();
    const view = await t.list(t.owner.id);
    const nextRun = Date.parse(view.next_run_at as string);
    expect(nextRun).toBeGreaterThanOrEqual(now);
    const caps = view.caps as {
      user_id: string | null;
      run_rate_micro_per_hour: number;
      possible_overshoot_micro: number;
      resets_at: string;
      window: string;
    }[];
    const teamCap = caps.find((c) => c.user_id === null)!;
    const memberCap = caps.find((c) => c.user_id === t.member.id)!;
    const perSandbox = SEED_RATES.vcpu_hour_micro;
    expect(teamCap.run_rate_micro_per_hour).toBe(2 * perSandbox);
    expect(memberCap.run_rate_micro_per_hour).toBe(perSandbox);
    // The run-rate over the time to the next run (from the server's moment, a little after `now`).
    expect(memberCap.possible_overshoot_micro).toBeGreaterThan(0);
    expect(memberCap.possible_overshoot_micro).toBeLessThanOrEqual(possibleOvershootMicro(perSandbox, nextRun - now));
    expect(teamCap.resets_at).toBe(new Date(windowBounds("day", now).end).toISOString());
    expect(memberCap.resets_at).toBe(new Date(windowBounds("month", now).end).toISOString());
  });

  it("alerts each threshold once per window, however many instances run the job at once", async () => {
    const t = await team();
    await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: null,
      window: "month",
      limitMicro: 1_000_000,
      action: "alert",
      by: t.owner.id,
    });
    const at60 = deps({ team: 600_000 });
    // Two instances evaluating the same team at the same moment: the alert row is the claim.
    const [a, b] = await Promise.all([
      enforceTeamCaps(ctx.db(), t.teamId, at60.d, NOW),
      enforceTeamCaps(ctx.db(), t.teamId, at60.d, NOW),
    ]);
    expect([...a[0]!.alerts, ...b[0]!.alerts]).toEqual([50]);
    expect(at60.alerts).toHaveLength(1);
    const at120 = deps({ team: 1_200_000 });
    const [d] = await enforceTeamCaps(ctx.db(), t.teamId, at120.d, NOW + 60_000);
    expect(d).toMatchObject({ alerts: [80, 100], reached: true, paused: [] });
    expect(at120.pauses).toEqual([]); // "alert" caps never pause
    // Next month: a new window, alerted again.
    const nextMonth = deps({ team: 600_000 });
    const [e] = await enforceTeamCaps(ctx.db(), t.teamId, nextMonth.d, Date.parse("2027-01-02T00:00:00Z"));
    expect(e!.alerts).toEqual([50]);
    const audited = (await listAuditEvents(ctx.db(), { teamId: t.teamId })).filter(
      (x) => x.action === "spend_cap.alert",
    );
    expect(audited.map((x) => (x.data as { threshold: number }).threshold).sort()).toEqual([100, 50, 50, 80]);
    expect(audited[0]).toMatchObject({
      credential: "spend-caps-job",
      targetType: "spend_cap",
      data: { channels: { email: "sent" } },
    });
  });

  it("a reached block cap refuses the member's creates with 402 and who can raise it; raising lets them through", async () => {
    const t = await team();
    const cap = await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: t.member.id,
      window: "month",
      limitMicro: 1_000_000,
      action: "block",
      by: t.owner.id,
    });
    const member = await t.acting(t.member.id, "member");
    const other = await t.acting(t.other.id, "member");
    await enforceTeamCaps(ctx.db(), t.teamId, deps({ team: 1_500_000, byUser: { [t.member.id]: 1_000_000 } }).d, NOW);
    const refusal = await assertUnderCaps(ctx.db(), member, "create a sandbox", NOW).catch((e: unknown) => e);
    expect(refusal).toMatchObject({
      code: "spend_cap_reached",
      status: 402,
      detail:
        "Your monthly spend cap of €1.00 is reached (€1.00 spent this month, UTC), so Baton does not create a sandbox. " +
        "Running sandboxes keep running. The team's owners can raise the cap on the Usage page.",
    });
    // Another member of the team is not stopped by it.
    await expect(assertUnderCaps(ctx.db(), other, "create a sandbox", NOW)).resolves.toBeUndefined();
    // Raised above what is spent: through at once (the request-time check compares with the cap as it is now).
    await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: t.member.id,
      window: "month",
      limitMicro: 2_000_000,
      action: "block",
      by: t.owner.id,
    });
    await expect(assertUnderCaps(ctx.db(), member, "create a sandbox", NOW)).resolves.toBeUndefined();
    // Lowered below what was spent: blocks at once, before the job runs again.
    await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: t.member.id,
      window: "month",
      limitMicro: 500_000,
      action: "block",
      by: t.owner.id,
    });
    expect(await reachedCap(ctx.db(), t.teamId, t.member.id, NOW)).toMatchObject({
      cap: { id: cap.after.id },
      spentMicro: 1_000_000,
    });
    // Next month the job's figure is last month's: the month's own from the usage record (none yet) counts.
    expect(await reachedCap(ctx.db(), t.teamId, t.member.id, Date.parse("2027-01-01T00:00:01Z"))).toBeNull();
  });

  it("a new cap set below what is already spent blocks at once, before the job has computed it", async () => {
    const t = await team();
    // The usage record holds this month's spending (EUR 4.50 of the member's, 100 vCPU-hours at the
    // seed rates) and the team has no cap yet: the caps job has nothing to have computed.
    await ctx
      .db()
      .insertInto("usage_daily")
      .values({
        team_id: t.teamId,
        date: "2026-12-14",
        sandbox_id: "sbx_spent",
        user_id: t.member.id,
        template: "python-3.12",
        cpu_ms: 100 * 3_600_000,
        gib_ms: 0,
      })
      .execute();
    const member = await t.acting(t.member.id, "member");
    await expect(assertUnderCaps(ctx.db(), member, "create a sandbox", NOW)).resolves.toBeUndefined();
    const cap = await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: null,
      window: "month",
      limitMicro: 1_000_000,
      action: "block",
      by: t.owner.id,
    });
    expect(await reachedCap(ctx.db(), t.teamId, t.member.id, NOW)).toEqual({ cap: cap.after, spentMicro: 4_500_000 });
    await expect(assertUnderCaps(ctx.db(), member, "create a sandbox", NOW)).rejects.toMatchObject({
      code: "spend_cap_reached",
      status: 402,
      detail: expect.stringContaining("monthly spend cap of €1.00 is reached (€4.50 spent this month, UTC)"),
    });
    // Raised above it: through at once. A member's new daily cap counts that member's spending of
    // the day only: none yet (the record's row is yesterday's), then one vCPU-hour today.
    const by = t.owner.id;
    await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: null,
      window: "month",
      limitMicro: 5_000_000,
      action: "block",
      by,
    });
    const daily = await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: t.member.id,
      window: "day",
      limitMicro: 10_000,
      action: "block",
      by,
    });
    expect(await reachedCap(ctx.db(), t.teamId, t.member.id, NOW)).toBeNull();
    await ctx
      .db()
      .insertInto("usage_daily")
      .values({
        team_id: t.teamId,
        date: "2026-12-15",
        sandbox_id: "sbx_today",
        user_id: t.member.id,
        template: "python-3.12",
        cpu_ms: 3_600_000,
        gib_ms: 0,
      })
      .execute();
    expect(await reachedCap(ctx.db(), t.teamId, t.member.id, NOW)).toEqual({ cap: daily.after, spentMicro: 45_000 });
    expect(await reachedCap(ctx.db(), t.teamId, t.other.id, NOW)).toBeNull();
  });

  it("a reached pause cap pauses on every run while reached, audits it, and reports refused pauses", async () => {
    const t = await team();
    await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: null,
      window: "day",
      limitMicro: 100_000,
      action: "pause",
      by: t.owner.id,
    });
    const first = deps({ team: 150_000 });
    const [d1] = await enforceTeamCaps(ctx.db(), t.teamId, first.d, NOW);
    expect(d1).toMatchObject({ reached: true, paused: ["sbx_running"], alerts: [50, 80, 100] });
    expect(first.pauses).toEqual([null]);
    const refusing = deps({ team: 160_000 });
    refusing.d.pause = async () => ({ paused: [], failed: [{ id: "sbx_x", detail: "paused-sandbox limit reached" }] });
    const [d2] = await enforceTeamCaps(ctx.db(), t.teamId, refusing.d, NOW + 60_000);
    expect(d2).toMatchObject({ reached: true, alerts: [], pauseFailed: [{ id: "sbx_x" }] });
    expect(refusing.alerts).toMatchObject([{ kind: "pause_failed", failed: [{ id: "sbx_x" }] }]);
    // The same refusal on the next run is not said again (audit or alert); a different one is.
    const [d3] = await enforceTeamCaps(ctx.db(), t.teamId, refusing.d, NOW + 120_000);
    expect(d3).toMatchObject({ pauseFailed: [{ id: "sbx_x" }] });
    expect(refusing.alerts).toHaveLength(1);
    refusing.d.pause = async () => ({ paused: [], failed: [{ id: "sbx_y", detail: "paused-sandbox limit reached" }] });
    await enforceTeamCaps(ctx.db(), t.teamId, refusing.d, NOW + 180_000);
    expect(refusing.alerts.map((a) => a.failed?.[0]?.id)).toEqual(["sbx_x", "sbx_y"]);
    expect(
      (await listAuditEvents(ctx.db(), { teamId: t.teamId })).filter((e) => e.action === "spend_cap.pause_failed"),
    ).toHaveLength(2);
    const events = await listAuditEvents(ctx.db(), { teamId: t.teamId });
    expect(events.filter((e) => e.action === "spend_cap.reached")).toHaveLength(1);
    expect(events.find((e) => e.action === "spend_cap.pause")).toMatchObject({
      data: { paused: ["sbx_running"], spent_micro: 150_000, limit_micro: 100_000, action: "pause" },
    });
    expect(events.find((e) => e.action === "spend_cap.pause_failed")).toMatchObject({ result: "upstream_refused" });
    // Everyone of the team is blocked by a team cap, with the pause named.
    const owner = await t.acting(t.owner.id, "owner");
    await expect(assertUnderCaps(ctx.db(), owner, "resume this sandbox", NOW + 60_000)).rejects.toMatchObject({
      code: "spend_cap_reached",
      detail: expect.stringContaining("Its running sandboxes were paused"),
    });
  });

  it("the header's meter shows the caller's closest cap once past 50 %, and whether it is reached", async () => {
    const t = await team();
    await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: null,
      window: "month",
      limitMicro: 10_000_000,
      action: "block",
      by: t.owner.id,
    });
    await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: t.member.id,
      window: "day",
      limitMicro: 1_000_000,
      action: "pause",
      by: t.owner.id,
    });
    const member = await t.acting(t.member.id, "member");
    const other = await t.acting(t.other.id, "member");
    await enforceTeamCaps(ctx.db(), t.teamId, deps({ team: 4_000_000, byUser: { [t.member.id]: 400_000 } }).d, NOW);
    expect(await capMeterFor(ctx.db(), member, NOW)).toBeNull();
    await enforceTeamCaps(ctx.db(), t.teamId, deps({ team: 6_000_000, byUser: { [t.member.id]: 700_000 } }).d, NOW);
    const meter = await capMeterFor(ctx.db(), member, NOW);
    expect(meter).toMatchObject({
      cap: { userId: t.member.id, window: "day" },
      // The window the figure is for: the console's warning is dismissed for it (and its threshold) only.
      windowKey: windowKey("day", NOW),
      percent: 70,
      reached: false,
    });
    expect(meter!.cap.id).toMatch(/\S/);
    expect(await capMeterFor(ctx.db(), other, NOW)).toMatchObject({ cap: { userId: null }, percent: 60 });
    await enforceTeamCaps(ctx.db(), t.teamId, deps({ team: 6_000_000, byUser: { [t.member.id]: 1_000_000 } }).d, NOW);
    expect(await capMeterFor(ctx.db(), member, NOW)).toMatchObject({ percent: 100, reached: true });
    expect(await capMeterFor(ctx.db(), null, NOW)).toBeNull();
  });

  it("removes a cap of the team; another team's cap id is not found", async () => {
    const t = await team();
    const cap = await setCap(ctx.db(), {
      teamId: t.teamId,
      userId: null,
      window: "month",
      limitMicro: 1_000_000,
      action: "block",
      by: t.owner.id,
    });
    const u = await makeUser(ctx.db(), "owner");
    const theirs = await setCap(ctx.db(), {
      teamId: u.teamId!,
      userId: null,
      window: "month",
      limitMicro: 1_000_000,
      action: "block",
      by: u.user.id,
    });
    const del = async (id: string) =>
      deleteCapRoute(
        request(`/api/usage/caps/${id}`, { method: "DELETE", cookie: await t.cookie(t.owner.id), headers: t.headers }),
        {
          params: Promise.resolve({ id }),
        },
      );
    expect((await del(theirs.after.id)).status).toBe(404);
    expect((await del(cap.after.id)).status).toBe(200);
    expect((await del(cap.after.id)).status).toBe(404);
    expect((await t.list(t.owner.id)).caps).toEqual([]);
  });
});

describe.each(testBackends)("a reached spend cap at Baton's proxy on $name (real engine)", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  it("refuses create, fork, resume, keep-alive, auto-resume and template builds with 402, audited; other changes pass", async () => {
    const owner = await makeUser(ctx.db(), "owner");
    const teamId = owner.teamId!;
    const member = await makeUser(ctx.db(), null);
    await addMember(ctx.db(), { teamId, userId: member.user.id, role: "member" });
    const slug = (await getTeam(ctx.db(), teamId))!.slug;
    await connectLocalEngine(member.user.id, { teamId });
    const { cookie } = await sessionCookie(ctx.db(), member.user.id);
    const headers = { "x-baton-team": slug };
    const call = (handler: typeof createSandbox, url: string, method: string, body?: object, params = {}) =>
      handler(request(url, { method, cookie, headers, body }), { params: Promise.resolve(params) });

    const created = await call(createSandbox, "/api/v1/sandboxes", "POST", { template: "python-3.12" });
    expect(created.status).toBe(201);
    const id = ((await jsonOf(created)) as { id: string }).id;

    const cap = await setCap(ctx.db(), {
      teamId,
      userId: member.user.id,
      window: "month",
      limitMicro: 10_000,
      action: "block",
      by: owner.user.id,
    });
    const spent = { team: 20_000, byUser: new Map([[member.user.id, 20_000]]) };
    await enforceTeamCaps(ctx.db(), teamId, {
      spend: async () => spent,
      pause: async () => ({ paused: [], failed: [] }),
      notify: async () => ({}),
    });

    const refused = [
      await call(createSandbox, "/api/v1/sandboxes", "POST", { template: "python-3.12" }),
      await call(createSandbox, "/api/v1/sandboxes", "POST", { snapshot: "snap_01NOTCHECKEDBEFORETHECAP" }),
      await call(resumeSandbox, `/api/v1/sandboxes/${id}/resume`, "POST", {}, { id }),
      await call(setTimeoutRoute, `/api/v1/sandboxes/${id}/timeout`, "POST", { timeout_seconds: 600 }, { id }),
      await call(patchSandbox, `/api/v1/sandboxes/${id}`, "PATCH", { timeout_seconds: 600 }, { id }),
      await call(patchSandbox, `/api/v1/sandboxes/${id}`, "PATCH", { auto_resume: true }, { id }),
      await call(createTemplate, "/api/v1/templates", "POST", { name: "capped", base_image: "python-3.12" }),
    ];
    for (const res of refused) {
      expect(res.status).toBe(402);
      expect(await jsonOf(res)).toMatchObject({
        code: "spend_cap_reached",
        detail: expect.stringMatching(/^Your monthly spend cap of €0\.01 is reached \(€0\.02 spent this month, UTC\)/),
      });
    }
    // What does not prolong spending still works: metadata, pausing.
    expect(
      (await call(patchSandbox, `/api/v1/sandboxes/${id}`, "PATCH", { metadata: { a: "b" } }, { id })).status,
    ).toBe(200);
    const refusals = (await listAuditEvents(ctx.db(), { teamId })).filter((e) => e.result === "spend_cap_reached");
    expect(refusals.map((e) => e.action)).toContain("sandbox.create");
    expect(refusals.map((e) => e.action)).toContain("sandbox.resume");

    // Raised: through at once.
    await setCap(ctx.db(), {
      teamId,
      userId: member.user.id,
      window: "month",
      limitMicro: 1_000_000,
      action: "block",
      by: owner.user.id,
    });
    expect(cap.after.id).toBeTruthy();
    const again = await call(createSandbox, "/api/v1/sandboxes", "POST", { template: "python-3.12" });
    expect(again.status).toBe(201);
    for (const sid of [id, ((await jsonOf(again)) as { id: string }).id])
      await call(terminateSandbox, `/api/v1/sandboxes/${sid}`, "DELETE", undefined, { id: sid });
  }, 60_000);
});
