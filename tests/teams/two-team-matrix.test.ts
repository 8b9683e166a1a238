import "server-only";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { POST as invite } from "../../app/api/team/invitations/route";
import { POST as createToken } from "../../app/api/tokens/route";
import { GET as baseImages } from "../../app/api/v1/base-images/route";
import { POST as snapshotSandbox } from "../../app/api/v1/sandboxes/[id]/snapshots/route";
import { GET as getSandbox } from "../../app/api/v1/sandboxes/[id]/route";
import { POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { GET as getSnapshot } from "../../app/api/v1/snapshots/[id]/route";
import { GET as getTemplate } from "../../app/api/v1/templates/[id]/route";
import { POST as createTemplate } from "../../app/api/v1/templates/route";
import { GET as getVolume } from "../../app/api/v1/volumes/[id]/route";
import { POST as createVolume } from "../../app/api/v1/volumes/route";
import { GET as getWebhook } from "../../app/api/v1/webhooks/[id]/route";
import { POST as createWebhook } from "../../app/api/v1/webhooks/route";
import { hitRateLimit } from "../../lib/server/db/rate-limit";
import { addMember, getTeam } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { scopesFor, type TokenScope } from "../../lib/api-tokens/scope";
import { can, ROLES, type Permission, type Role } from "../../lib/server/rbac";
import { setCap } from "../../lib/server/usage/caps-store";
import { declaredRoute, type DeclaredRoute } from "../../lib/server/route";
import { emailRateKey, SIGN_IN_LIMITS } from "../../lib/server/sign-in";
import { connectLocalEngine } from "../../lib/server/tokens";
import { useLocalEngine } from "../console/engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, uniq, useConsoleDb } from "../console/helpers";

// Two teams × four roles × every console route (issue 21). Every app/api/**/route.ts is found on
// disk, as tests/console/route-matrix.test.ts does, so a new route cannot escape. For each role of
// team B and each route whose URL names a resource (`[id]`), naming a resource of team A answers
// exactly what naming an id that never existed answers (status, code, detail with the id masked),
// and A's resources are the same afterwards: nothing of A is read or changed from B. A's people
// (a member, by user id, and an invitation) are such resources too: B's owners and admins, who
// manage B's people, get 404 not_found for A's, and A's rows in the database stay as they were.

const API_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), "../../app/api");
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);
/**
 * Valid bodies and queries, so that the answer comes from looking the resource up and not from
 * validation (a 422 before the lookup would prove nothing). Were isolation broken, these would act
 * on A's resources, and the snapshot of A afterwards would show it.
 */
const BODIES: Record<string, object | string> = {
  "PATCH /api/team/members/[userId]": { role: "viewer" },
  "POST /api/v1/sandboxes/[id]/exec": { command: "true" },
  "POST /api/v1/sandboxes/[id]/exec/stream": { command: "true" },
  "POST /api/v1/sandboxes/[id]/files": {
    path: "/tmp/two-team",
    content: Buffer.from("from team B").toString("base64"),
  },
  "POST /api/v1/sandboxes/[id]/files/batch": {
    files: [{ path: "/tmp/two-team", content: Buffer.from("from team B").toString("base64") }],
  },
  "POST /api/v1/sandboxes/[id]/files/presign-download": { path: "/tmp/two-team" },
  "POST /api/v1/sandboxes/[id]/files/presign-upload": { path: "/tmp/two-team" },
  "POST /api/v1/sandboxes/[id]/snapshots": { name: "from-team-b" },
  "POST /api/v1/sandboxes/[id]/timeout": { timeout_seconds: 600 },
  "POST /api/v1/volumes/[id]/move": { region: "hel1" },
  "PUT /api/v1/sandboxes/[id]/files/raw": "from team B",
};
const QUERIES: Record<string, string> = {
  "GET /api/v1/sandboxes/[id]/files": "path=%2Ftmp",
  "DELETE /api/v1/sandboxes/[id]/files": "path=%2Ftmp%2Ftwo-team",
  "GET /api/v1/sandboxes/[id]/files/raw": "path=%2Ftmp%2Ftwo-team",
  "PUT /api/v1/sandboxes/[id]/files/raw": "path=%2Ftmp%2Ftwo-team",
};

/** Routes with a resource id that are not a team's resource, and why. */
const NOT_TEAM_RESOURCES: Record<string, string> = {
  "/api/connections/[id]": "a user's own connection (per user): tests/console/connection-access.test.ts",
  "/api/hooks/[id]": "the public webhook receiver, authenticated by each delivery's signature",
  "/api/[...path]": "no route: the same 404 for every path",
  "/api/auth/[...nextauth]": "next-auth's own endpoints",
  "/api/me/invitations/[id]/accept": "the signed-in user's own invitation: joins the inviting team",
  "/api/me/invitations/[id]/decline": "the signed-in user's own invitation",
  "/api/me/sessions/[id]": "the signed-in user's own sessions (per user)",
};

interface RouteMethod {
  key: string;
  method: (typeof METHODS)[number];
  pattern: string;
  handler: (req: Request, ctx: { params: Promise<Record<string, string | string[]>> }) => Promise<Response>;
  declared: DeclaredRoute | undefined;
}

function routeFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return routeFiles(full);
    return /^route\.(ts|tsx|js|mjs)$/.test(entry.name) ? [full] : [];
  });
}

async function discover(): Promise<RouteMethod[]> {
  const found: RouteMethod[] = [];
  for (const file of routeFiles(API_DIR).sort()) {
    const pattern = `/api/${path.relative(API_DIR, path.dirname(file)).split(path.sep).join("/")}`.replace(/\/$/, "");
    const mod = (await import(file)) as Record<string, unknown>;
    for (const method of METHODS) {
      const handler = mod[method];
      if (typeof handler !== "function") continue;
      found.push({
        key: `${method} ${pattern}`,
        method,
        pattern,
        handler: handler as RouteMethod["handler"],
        declared: declaredRoute(handler),
      });
    }
  }
  return found;
}

const ROUTES = await discover();
/** Which kind of team resource a route's first `[id]` (a member's `[userId]`) names, from its path. */
function kindOf(pattern: string): Kind | null {
  const m =
    /^\/api\/(?:v1\/)?(sandboxes|snapshots|templates|volumes|webhooks|hooks\/receivers|team\/invitations|usage\/caps|tokens)\/\[id\]|^\/api\/(team\/members)\/\[userId\]/.exec(
      pattern,
    );
  return m ? ((m[1] ?? m[2]) as Kind) : null;
}
type Kind =
  | "sandboxes"
  | "snapshots"
  | "templates"
  | "volumes"
  | "webhooks"
  | "hooks/receivers"
  | "team/members"
  | "team/invitations"
  | "usage/caps"
  | "tokens";
/** Kinds managed through the console's own database (members.manage), not the engine. */
const PEOPLE: ReadonlySet<Kind> = new Set(["team/members", "team/invitations"]);
/** Console-database kinds, and the permission under which B's own lookup runs (then 404, never 403). */
const CONSOLE_KINDS: ReadonlyMap<Kind, Permission> = new Map([
  ["team/members", "members.manage"],
  ["team/invitations", "members.manage"],
  ["usage/caps", "billing.manage"],
  // A personal API token: every member manages their own (admins the team's), so every role's lookup runs.
  ["tokens", "team.read"],
]);
const WITH_ID = ROUTES.filter((r) => /\[[^\]]+\]/.test(r.pattern) && NOT_TEAM_RESOURCES[r.pattern] === undefined);

describe("the two-team matrix covers every route with a resource id", () => {
  it("names the resource kind of each, or says why it is not a team's resource", () => {
    expect(WITH_ID.length).toBeGreaterThan(25);
    for (const r of WITH_ID) {
      expect(r.declared, `${r.key} is not built with route()`).toBeDefined();
      expect(kindOf(r.pattern), `${r.key}: which team resource does it name?`).not.toBeNull();
    }
    for (const p of Object.keys(NOT_TEAM_RESOURCES))
      expect(
        ROUTES.some((r) => r.pattern === p),
        p,
      ).toBe(true);
  });
});

/** An id of the same shape that never existed: the suffix reversed (same alphabet and length). */
function neverExisted(id: string): string {
  const at = id.indexOf("_") + 1;
  const rest = id.slice(at);
  const reversed = [...rest].reverse().join("");
  return id.slice(0, at) + (reversed === rest ? `${rest.slice(1)}0` : reversed);
}

describe.each(testBackends)("two teams × four roles on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));
  let cookieA = "";
  let teamAId = "";
  const ids = {} as Record<Kind, string>;
  const cookiesB = new Map<Role, string>();
  /** B's people's API tokens: each role with each scope it may hold. */
  const tokensB: Array<{ role: Role; scope: TokenScope; token: string }> = [];
  let snapshotBefore: Record<string, unknown> = {};
  let memberOfA = { email: "", sessionId: "" };

  /** What A's owner reads of each resource of A (its identity and state, not timestamps). */
  async function snapshotOfA(): Promise<Record<string, unknown>> {
    const read = async (handler: RouteMethod["handler"], url: string, id: string) => {
      const res = await handler(request(url, { cookie: cookieA }), { params: Promise.resolve({ id }) });
      const body = (await jsonOf(res)) as Record<string, unknown>;
      const keep = ["id", "name", "status", "url", "enabled", "size_gb", "event_types", "metadata", "base_image"];
      return { http: res.status, ...Object.fromEntries(keep.filter((k) => k in body).map((k) => [k, body[k]])) };
    };
    return {
      sandbox: await read(getSandbox, `/api/v1/sandboxes/${ids.sandboxes}`, ids.sandboxes),
      snapshot: await read(getSnapshot, `/api/v1/snapshots/${ids.snapshots}`, ids.snapshots),
      volume: await read(getVolume, `/api/v1/volumes/${ids.volumes}`, ids.volumes),
      template: await read(getTemplate, `/api/v1/templates/${ids.templates}`, ids.templates),
      webhook: await read(getWebhook, `/api/v1/webhooks/${ids.webhooks}`, ids.webhooks),
      people: await peopleOfA(),
    };
  }

  /** A's people as the database holds them: memberships, invitations, the member's sessions and lockout. */
  async function peopleOfA() {
    const db = ctx.db();
    return {
      memberships: await db
        .selectFrom("memberships")
        .select(["user_id", "role", "disabled_at"])
        .where("team_id", "=", teamAId)
        .orderBy("user_id")
        .execute(),
      invitations: await db
        .selectFrom("invitations")
        .select(["id", "email", "role", "expires_at", "last_sent_at", "accepted_at", "revoked_at"])
        .where("team_id", "=", teamAId)
        .orderBy("id")
        .execute(),
      sessions: await db
        .selectFrom("sessions")
        .select(["id", "expires_at", "revoked_at"])
        .where("user_id", "=", ids["team/members"])
        .orderBy("id")
        .execute(),
      caps: await db
        .selectFrom("spend_caps")
        .select(["id", "subject", "window", "limit_micro", "action"])
        .where("team_id", "=", teamAId)
        .execute(),
      apiTokens: await db
        .selectFrom("api_tokens")
        .select(["id", "name", "scope", "expires_at", "revoked_at"])
        .where("team_id", "=", teamAId)
        .orderBy("id")
        .execute(),
      lockout: await db
        .selectFrom("login_attempts")
        .select(["window_start", "count"])
        .where("key", "=", emailRateKey(memberOfA.email))
        .execute(),
    };
  }

  beforeAll(async () => {
    // Team A: its owner, connected to A's engine account, with one resource of each kind.
    const a = await makeUser(ctx.db(), "owner");
    await connectLocalEngine(a.user.id, { teamId: a.teamId });
    cookieA = (await sessionCookie(ctx.db(), a.user.id)).cookie;
    teamAId = a.teamId!;
    const post = async (handler: RouteMethod["handler"], url: string, body: object, params = {}) => {
      const res = await handler(request(url, { method: "POST", cookie: cookieA, body }), {
        params: Promise.resolve(params),
      });
      const json = await jsonOf(res);
      expect(res.status, `${url}: ${JSON.stringify(json)}`).toBeLessThan(300);
      return json as { id: string };
    };
    ids.sandboxes = (await post(createSandbox, "/api/v1/sandboxes", { template: "python-3.12" })).id;
    ids.snapshots = (
      await post(
        snapshotSandbox,
        `/api/v1/sandboxes/${ids.sandboxes}/snapshots`,
        { name: "a-snap" },
        { id: ids.sandboxes },
      )
    ).id;
    ids.volumes = (await post(createVolume, "/api/v1/volumes", { name: uniq("a-vol") })).id;
    const images = (await (await baseImages(request("/api/v1/base-images", { cookie: cookieA }), noParams)).json()) as
      Array<{ id?: string; name?: string }> | { items?: Array<{ id?: string; name?: string }> };
    const list = Array.isArray(images) ? images : (images.items ?? []);
    const image = list[0]?.id ?? list[0]?.name ?? "python-3.12";
    ids.templates = (await post(createTemplate, "/api/v1/templates", { name: uniq("a-tpl"), base_image: image })).id;
    ids.webhooks = (await post(createWebhook, "/api/v1/webhooks", { url: "https://hooks.example.com/a" })).id;
    ids["hooks/receivers"] = ids.webhooks;
    // A's people: a member with a live session and a sign-in lockout (so that disable, revoking the
    // session and unlock would each leave a trace), and a pending invitation; both of a role that
    // B's admin could manage were the lookups not confined to the acting team.
    const member = await makeUser(ctx.db(), null);
    await addMember(ctx.db(), { teamId: teamAId, userId: member.user.id, role: "member" });
    ids["team/members"] = member.user.id;
    memberOfA = { email: member.user.email, sessionId: (await sessionCookie(ctx.db(), member.user.id)).sessionId };
    for (let i = 0; i < SIGN_IN_LIMITS.email.limit + 1; i++)
      await hitRateLimit(ctx.db(), emailRateKey(member.user.email), SIGN_IN_LIMITS.email);
    const invited = (await post(invite, "/api/team/invitations", {
      email: `${uniq("invitee")}@example.com`,
      role: "member",
    })) as unknown as { invitation: { id: string } };
    ids["team/invitations"] = invited.invitation.id;
    // A's spend cap on its member (a console-database row that B's owners could remove were the
    // lookup not confined to the acting team).
    ids["usage/caps"] = (
      await setCap(ctx.db(), {
        teamId: teamAId,
        userId: member.user.id,
        window: "month",
        limitMicro: 5_000_000,
        action: "block",
        by: a.user.id,
      })
    ).after.id;

    // A's owner's personal API token (a console-database row B must neither see nor revoke).
    ids.tokens = (
      (await post(createToken, "/api/tokens", { name: "a-token", scope: "write" })) as unknown as {
        api_token: { id: string };
      }
    ).api_token.id;

    // Team B: one user of each role, each connected to B's engine account, with an API token of
    // each scope the role may hold.
    const ownerB = await makeUser(ctx.db(), "owner");
    const teamB = ownerB.teamId!;
    for (const role of ROLES) {
      let userId = ownerB.user.id;
      if (role !== "owner") {
        const other = await makeUser(ctx.db(), null);
        await addMember(ctx.db(), { teamId: teamB, userId: other.user.id, role });
        userId = other.user.id;
      }
      await connectLocalEngine(userId, { teamId: teamB });
      cookiesB.set(role, (await sessionCookie(ctx.db(), userId)).cookie);
      for (const scope of scopesFor(role)) {
        const res = await createToken(
          request("/api/tokens", { method: "POST", cookie: cookiesB.get(role)!, body: { name: "b", scope } }),
          noParams,
        );
        expect(res.status).toBe(201);
        tokensB.push({ role, scope, token: ((await res.json()) as { token: string }).token });
      }
    }
    // The template builds by itself: wait until it is done, so its own progress is not a "change".
    for (let i = 0; i < 120; i++) {
      const res = await getTemplate(request(`/api/v1/templates/${ids.templates}`, { cookie: cookieA }), {
        params: Promise.resolve({ id: ids.templates }),
      });
      if (((await jsonOf(res)) as { status?: string }).status !== "building") break;
      await new Promise((r) => setTimeout(r, 250));
    }
    snapshotBefore = await snapshotOfA();
    expect(snapshotBefore).toMatchObject({ template: { status: expect.not.stringMatching(/^building$/) } });
    expect(snapshotBefore).toMatchObject({
      sandbox: { http: 200 },
      volume: { http: 200 },
      webhook: { http: 200 },
      people: {
        memberships: expect.arrayContaining([{ user_id: ids["team/members"], role: "member", disabled_at: null }]),
        invitations: [{ id: ids["team/invitations"], accepted_at: null, revoked_at: null }],
        sessions: [{ id: memberOfA.sessionId, revoked_at: null }],
        lockout: [{ count: expect.anything() }],
        caps: [{ id: ids["usage/caps"], window: "month", limit_micro: 5_000_000, action: "block" }],
        apiTokens: [{ id: ids.tokens, revoked_at: null }],
      },
    });
  }, 120_000);

  /** What `role` of B is answered for `id`, acting in B, or in the team `naming` names by its slug. */
  async function answer(
    r: RouteMethod,
    role: Role,
    id: string,
    naming?: { slug: string; via: "header" | "query" },
    bearer?: string,
  ) {
    const params: Record<string, string> = {};
    for (const [, name] of r.pattern.matchAll(/\[([^\]]+)\]/g)) {
      if (name === "id" || name === "userId") params[name] = id;
      else if (name === "port") params.port = "3000";
      else if (name === "dlv") params.dlv = "dlv_01TWOTEAMSMISSING";
      // A's member's real session: revoking it would show in A's rows.
      else if (name === "sessionId") params.sessionId = memberOfA.sessionId;
      else params[name!] = "pty_01TWOTEAMSMISSING";
    }
    let url = r.pattern.replace(/\[([^\]]+)\]/g, (_m, name: string) => encodeURIComponent(params[name]!));
    const query = new URLSearchParams(QUERIES[r.key] ?? "");
    if (naming?.via === "query") query.set("team", naming.slug);
    if (query.size > 0) url += `?${query}`;
    const headers: Record<string, string> = naming?.via === "header" ? { "x-baton-team": naming.slug } : {};
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const body = SAFE.has(r.method) ? undefined : (BODIES[r.key] ?? {});
    const cookie = bearer ? undefined : cookiesB.get(role)!;
    const res = await r.handler(request(url, { method: r.method, cookie, headers, body }), {
      params: Promise.resolve(params),
    });
    const text = r.method === "HEAD" ? "" : await res.text();
    // The answer must come from the lookup: a body or query this test gets wrong is its own failure.
    expect([400, 422], `${r.key} as ${role}: ${text.slice(0, 200)}`).not.toContain(res.status);
    let json: { code?: unknown; detail?: unknown } = {};
    try {
      json = JSON.parse(text) as typeof json;
    } catch {
      // not JSON: compared by status and the masked text
    }
    const mask = (s: string) => s.split(id).join("<id>");
    return {
      status: res.status,
      code: json.code ?? null,
      detail: typeof json.detail === "string" ? mask(json.detail) : mask(text).slice(0, 200),
    };
  }

  it.each(WITH_ID.map((r) => [r.key, r] as const))(
    "%s: A's resource answers as one that never existed",
    async (_k, r) => {
      const kind = kindOf(r.pattern)!;
      const real = ids[kind];
      for (const role of ROLES) {
        const forA = await answer(r, role, real);
        const forNothing = await answer(r, role, neverExisted(real));
        expect(forA, `${r.key} as ${role} of B naming A's ${kind}`).toEqual(forNothing);
        expect(forA.status, `${r.key} as ${role} of B: never a success on A's ${kind}`).toBeGreaterThanOrEqual(400);
        // B's owners and admins pass the permission check: the lookup in B is what must not find it
        // (404, never 403, which would say it exists elsewhere). Members and viewers get 403 for both.
        const lookupPerm = CONSOLE_KINDS.get(kind);
        if (lookupPerm && can(role, lookupPerm))
          expect(forA, `${r.key} as ${role} of B naming A's ${kind}`).toMatchObject({ status: 404, code: "not_found" });
      }
    },
  );

  it.each(WITH_ID.filter((r) => r.pattern.startsWith("/api/v1/")).map((r) => [r.key, r] as const))(
    "%s with team B's API tokens: A's resource answers as one that never existed",
    async (_k, r) => {
      const real = ids[kindOf(r.pattern)!];
      for (const { role, scope, token } of tokensB) {
        const label = `${r.key} with a ${scope} token of B's ${role}`;
        const forA = await answer(r, role, real, undefined, token);
        expect(forA, label).toEqual(await answer(r, role, neverExisted(real), undefined, token));
        expect(forA.status, label).toBeGreaterThanOrEqual(400);
        expect(forA.status, label).not.toBe(401);
      }
    },
  );

  it("a team-B token naming team A is refused (the token fixes its team), whatever the role", async () => {
    const slugA = (await getTeam(ctx.db(), teamAId))!.slug;
    const get = WITH_ID.find((r) => r.key === "GET /api/v1/sandboxes/[id]")!;
    for (const { role, scope, token } of tokensB)
      for (const via of ["header", "query"] as const)
        expect(
          await answer(get, role, ids.sandboxes, { slug: slugA, via }, token),
          `${role} ${scope} ${via}`,
        ).toMatchObject({
          status: 403,
          code: "token_team_mismatch",
        });
  });

  it("a member of B naming team A on the people routes gets 404 team_not_found, as for a team that does not exist", async () => {
    const slugA = (await getTeam(ctx.db(), teamAId))!.slug;
    const people = WITH_ID.filter((r) => PEOPLE.has(kindOf(r.pattern)!));
    expect(people.map((r) => r.key).sort()).toEqual([
      "DELETE /api/team/invitations/[id]",
      "DELETE /api/team/members/[userId]",
      "DELETE /api/team/members/[userId]/sessions/[sessionId]",
      "GET /api/team/members/[userId]/sessions",
      "PATCH /api/team/members/[userId]",
      "POST /api/team/invitations/[id]/resend",
      "POST /api/team/members/[userId]/disable",
      "POST /api/team/members/[userId]/enable",
      "POST /api/team/members/[userId]/unlock",
    ]);
    for (const r of people)
      for (const role of ROLES)
        for (const via of ["header", "query"] as const) {
          const id = ids[kindOf(r.pattern)!];
          const teamA = await answer(r, role, id, { slug: slugA, via });
          const label = `${r.key} as ${role} of B naming team A by ${via}`;
          expect(teamA, label).toMatchObject({ status: 404, code: "team_not_found" });
          expect(teamA, label).toEqual(await answer(r, role, id, { slug: "no-such-team-anywhere", via }));
        }
  });

  it("nothing of A was read or changed from B", async () => {
    expect(await snapshotOfA()).toEqual(snapshotBefore);
  });

  it("a member of B naming team A gets 404 team_not_found, the same as for a team that does not exist", async () => {
    const slugA = (await getTeam(ctx.db(), teamAId))!.slug;
    for (const role of ROLES) {
      const named = async (slug: string) => {
        const res = await getSandbox(
          request(`/api/v1/sandboxes/${ids.sandboxes}`, {
            cookie: cookiesB.get(role)!,
            headers: { "x-baton-team": slug },
          }),
          { params: Promise.resolve({ id: ids.sandboxes }) },
        );
        return { status: res.status, body: await jsonOf(res) };
      };
      const teamA = await named(slugA);
      expect(teamA).toMatchObject({ status: 404, body: { code: "team_not_found" } });
      expect(teamA).toEqual(await named("no-such-team-anywhere"));
    }
  });
});
