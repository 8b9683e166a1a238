import "server-only";
import { describe, expect, it } from "vitest";
import { GET as listRoute, POST as createRoute } from "../../app/api/tokens/route";
import { POST as execIn } from "../../app/api/v1/sandboxes/[id]/exec/route";
import { POST as resumeSandbox } from "../../app/api/v1/sandboxes/[id]/resume/route";
import { DELETE as terminate, GET as getSandbox } from "../../app/api/v1/sandboxes/[id]/route";
import { GET as listSandboxes, POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { tokenMonthSpend } from "../../lib/server/api-tokens/limits";
import { listAuditEvents } from "../../lib/server/db/audit";
import { addMember, getTeam } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import type { Role } from "../../lib/server/rbac";
import { connectLocalEngine } from "../../lib/server/tokens";
import { updateUsageRates } from "../../lib/server/usage/rates";
import { readUsageOnce, stopUsageReader } from "../../lib/server/usage/reader";
import type { ApiTokensView, CreatedApiTokenDto } from "../../lib/validations/api-tokens";
import { useLocalEngine } from "../console/engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, useConsoleDb } from "../console/helpers";

// A personal API token's own limits (issue 23; lib/server/api-tokens/limits.ts) through the real
// route handlers and a real engine: a monthly spend cap from Baton's usage record of the sandboxes
// made with the token, and a maximum of concurrent sandboxes counted upstream by the token's stamp.

describe.each(testBackends)("API token limits on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  async function member(role: Role, teamId?: string) {
    const made = await makeUser(ctx.db(), teamId ? null : role);
    const team = teamId ?? made.teamId!;
    if (teamId) await addMember(ctx.db(), { teamId, userId: made.user.id, role });
    await connectLocalEngine(made.user.id, { teamId: team });
    const { cookie } = await sessionCookie(ctx.db(), made.user.id);
    return { user: made.user, teamId: team, cookie };
  }
  const makeToken = (cookie: string, body: Record<string, unknown>) =>
    createRoute(request("/api/tokens", { method: "POST", cookie, body }), noParams);
  async function tokenWith(cookie: string, limits: Record<string, unknown>, name = "agent") {
    const res = await makeToken(cookie, { name, scope: "write", ...limits });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(201);
    return (await res.json()) as CreatedApiTokenDto;
  }
  const params = (id: string) => ({ params: Promise.resolve({ id }) });
  const withToken = (path: string, token: string, init: { method?: string; body?: object } = {}) =>
    request(path, { ...init, headers: { authorization: `Bearer ${token}` } });
  const create = (token: string) =>
    createSandbox(
      withToken("/api/v1/sandboxes", token, { method: "POST", body: { template: "python-3.12" } }),
      noParams,
    );
  const createWithCookie = (cookie: string) =>
    createSandbox(
      request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "python-3.12" } }),
      noParams,
    );
  const idOf = async (res: Response) => ((await res.json()) as { id: string }).id;

  it("takes a cap in whole cents and 1–100 concurrent sandboxes at creation, shows them, and refuses anything else", async () => {
    const { cookie } = await member("member");
    for (const bad of [
      { spend_cap_micro: 12_345 },
      { spend_cap_micro: 0 },
      { spend_cap_micro: 1.5 },
      { spend_cap_micro: -10_000 },
      { max_concurrent_sandboxes: 0 },
      { max_concurrent_sandboxes: 101 },
      { max_concurrent_sandboxes: 2.5 },
      { max_concurrent_sandboxes: "3" },
    ]) {
      const res = await makeToken(cookie, { name: "x", scope: "write", ...bad });
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(await jsonOf(res)).toMatchObject({ code: "validation_error" });
    }
    const made = await tokenWith(cookie, { spend_cap_micro: 5_000_000, max_concurrent_sandboxes: 3 });
    expect(made.api_token).toMatchObject({ spend_cap_micro: 5_000_000, max_concurrent_sandboxes: 3 });
    const plain = await tokenWith(cookie, {}, "plain");
    expect(plain.api_token).toMatchObject({ spend_cap_micro: null, max_concurrent_sandboxes: null });
    const list = (await (await listRoute(request("/api/tokens", { cookie }), noParams)).json()) as ApiTokensView;
    expect(list.tokens.find((t) => t.id === made.api_token.id)).toMatchObject({
      spend_cap_micro: 5_000_000,
      max_concurrent_sandboxes: 3,
    });
  });

  it("a token's cap, once its sandboxes spent it, refuses its creates and resumes with 402; the job audits and pauses once; other credentials go on", async () => {
    // This test runs the reading job itself: the process's own (started with the database, first
    // run 5 s in) would book the usage and act on the cap at a moment of its choosing.
    stopUsageReader();
    const owner = await member("owner");
    // A rate card that makes a few CPU-seconds cost more than the cap (EUR 100 per vCPU-hour and GiB-hour).
    await updateUsageRates(
      ctx.db(),
      owner.teamId,
      { vcpu_hour_micro: 100_000_000, gib_hour_micro: 100_000_000 },
      owner.user.id,
    );
    const capped = await tokenWith(owner.cookie, { spend_cap_micro: 10_000 }, "looping agent");
    const free = await tokenWith(owner.cookie, {}, "other agent");

    const made = await create(capped.token);
    expect(made.status).toBe(201);
    const id = await idOf(made);
    // Stamped with the token, and recorded as the token's.
    const got = await getSandbox(withToken(`/api/v1/sandboxes/${id}`, capped.token), params(id));
    expect(((await got.json()) as { metadata: Record<string, string> }).metadata).toMatchObject({
      "baton.user": owner.user.id,
      "baton.token": capped.api_token.id,
    });
    const freeMade = await create(free.token);
    expect(freeMade.status).toBe(201);

    const ran = await execIn(
      withToken(`/api/v1/sandboxes/${id}/exec`, capped.token, {
        method: "POST",
        body: { command: "timeout 2 sh -c 'yes > /dev/null'; true", timeout_seconds: 20 },
      }),
      params(id),
    );
    expect(ran.status).toBe(200);
    expect(await tokenMonthSpend(ctx.db(), owner.teamId, capped.api_token.id)).toBe(0);

    // The usage job reads the counters; the token's caps run right after.
    const [run] = await readUsageOnce(ctx.db(), { teams: [owner.teamId] });
    expect(run).toMatchObject({ error: null });
    const spent = await tokenMonthSpend(ctx.db(), owner.teamId, capped.api_token.id);
    expect(spent).toBeGreaterThanOrEqual(10_000);
    // The other token's sandbox is not counted for this one (and the other token has no cap).
    expect(await tokenMonthSpend(ctx.db(), owner.teamId, free.api_token.id)).toBeLessThan(spent);

    const refused = await create(capped.token);
    expect(refused.status).toBe(402);
    const body = (await jsonOf(refused)) as { code: string; detail: string };
    expect(body.code).toBe("spend_cap_reached");
    expect(body.detail).toContain("looping agent");
    expect(body.detail).toContain("€0.01");
    expect(body.detail).toMatch(/new token/);

    // The job paused the token's running sandbox, once, and audited it with the token as subject.
    const paused = await getSandbox(withToken(`/api/v1/sandboxes/${id}`, capped.token), params(id));
    expect(((await paused.json()) as { status: string }).status).toBe("paused");
    const resumed = await resumeSandbox(
      withToken(`/api/v1/sandboxes/${id}/resume`, capped.token, { method: "POST" }),
      params(id),
    );
    expect(resumed.status).toBe(402);
    await readUsageOnce(ctx.db(), { teams: [owner.teamId] });
    const audit = await listAuditEvents(ctx.db(), { teamId: owner.teamId, limit: 100 });
    const reached = audit.filter((e) => e.action === "spend_cap.reached");
    expect(reached).toHaveLength(1);
    expect(reached[0]).toMatchObject({
      targetType: "api_token",
      targetId: capped.api_token.id,
      credential: "spend-caps-job",
      data: { subject: "api_token", name: "looping agent", limit_micro: 10_000, paused: [id] },
    });
    // The refusals are audited with the token as the credential.
    const refusals = audit.filter((e) => e.result === "spend_cap_reached");
    expect(refusals.length).toBeGreaterThanOrEqual(2);
    expect(refusals[0]).toMatchObject({ credential: `token:looping agent (${capped.api_token.id})` });

    // Another token of the same member, and the member's session, are not held by this token's cap.
    expect((await create(free.token)).status).toBe(201);
    expect((await createWithCookie(owner.cookie)).status).toBe(201);
  }, 60_000);

  it("a token's concurrency limit refuses the next create with 429, parallel creates included; a terminate frees a place", async () => {
    const owner = await member("owner");
    const { token, api_token } = await tokenWith(owner.cookie, { max_concurrent_sandboxes: 2 }, "ci");
    const first = await create(token);
    expect(first.status).toBe(201);
    const firstId = await idOf(first);
    // Two more at once: the team's cap lock takes them one at a time, so exactly one passes.
    const [a, b] = await Promise.all([create(token), create(token)]);
    expect([a.status, b.status].sort()).toEqual([201, 429]);
    const over = a.status === 429 ? a : b;
    const { code, detail } = (await jsonOf(over)) as { code: string; detail: string };
    expect(code).toBe("concurrency_limit");
    expect(detail).toContain("at most 2 sandboxes at once");
    expect(detail).toContain("ci");
    // Only this token's sandboxes count: the member's own session still creates.
    expect((await createWithCookie(owner.cookie)).status).toBe(201);
    const listed = await listSandboxes(
      withToken(`/api/v1/sandboxes?metadata[baton.token]=${api_token.id}`, token),
      noParams,
    );
    expect(listed.status).toBe(200);

    const gone = await terminate(
      withToken(`/api/v1/sandboxes/${firstId}`, token, { method: "DELETE" }),
      params(firstId),
    );
    expect(gone.status).toBeLessThan(300);
    expect((await create(token)).status).toBe(201);
    expect((await create(token)).status).toBe(429);

    const audit = await listAuditEvents(ctx.db(), { teamId: owner.teamId, limit: 100 });
    const refusals = audit.filter((e) => e.result === "concurrency_limit");
    expect(refusals).toHaveLength(2);
    expect(refusals[0]).toMatchObject({ action: "sandbox.create", credential: `token:ci (${api_token.id})` });
  }, 60_000);

  it("a token presented in another team is refused and the refusal is audited with the token's user and team", async () => {
    const a = await member("owner");
    const b = await member("owner");
    await addMember(ctx.db(), { teamId: b.teamId, userId: a.user.id, role: "owner" });
    const { token, api_token } = await tokenWith(a.cookie, {}, "wrong team");
    const teamB = (await getTeam(ctx.db(), b.teamId))!;
    const res = await createSandbox(
      request("/api/v1/sandboxes", {
        method: "POST",
        body: { template: "python-3.12" },
        headers: { authorization: `Bearer ${token}`, "x-baton-team": teamB.slug },
      }),
      noParams,
    );
    expect(res.status).toBe(403);
    expect(await jsonOf(res)).toMatchObject({ code: "token_team_mismatch" });
    const [event] = await listAuditEvents(ctx.db(), { teamId: a.teamId, limit: 1 });
    expect(event).toMatchObject({
      action: "sandbox.create",
      result: "token_team_mismatch",
      userId: a.user.id,
      credential: `token:wrong team (${api_token.id})`,
    });
    expect(await listAuditEvents(ctx.db(), { teamId: b.teamId, limit: 5 })).not.toContainEqual(
      expect.objectContaining({ result: "token_team_mismatch" }),
    );
  });
});
