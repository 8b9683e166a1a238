import "server-only";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { POST as execInSandbox } from "../../app/api/v1/sandboxes/[id]/exec/route";
import { POST as openTerminal } from "../../app/api/v1/sandboxes/[id]/pty/route";
import { GET as getSandbox } from "../../app/api/v1/sandboxes/[id]/route";
import { POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { addMember, createTeamWithOwner, slugify, updateTeam } from "../../lib/server/db/teams";
import { setSetting } from "../../lib/server/db/settings";
import { INSTANCE_OWNER_KEY } from "../../lib/server/db/sso";
import { testBackends } from "../../lib/server/db/test-backends";
import { createUser } from "../../lib/server/db/users";
import { actingCan, can, ROLES, type Role } from "../../lib/server/rbac";
import { declaredRoute, type DeclaredRoute } from "../../lib/server/route";
import { effectiveRole, type TokenScope } from "../../lib/api-tokens/scope";
import { newApiToken } from "../../lib/server/api-tokens/format";
import { insertApiToken } from "../../lib/server/db/api-tokens";
import { fileLinkQuery } from "../../lib/server/file-link-signature";
import { connectLocalEngine } from "../../lib/server/tokens";
import { useLocalEngine } from "./engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, uniq, useConsoleDb } from "./helpers";

// The route × role matrix. Every app/api/**/route.ts is found on disk and
// imported; every HTTP method it exports is checked against what it declared to route() (read back
// with declaredRoute(), so nothing here is a hand-kept copy of the routes' permissions):
// - no session → 401, unless the route is listed in PUBLIC below, with the reason;
// - each role (and a user in no team) without the route's permission → 403 forbidden; with it →
//   neither 401 nor Baton's 403 (validation or upstream answers are fine: the access check passed);
// - every mutation from another site → 403 bad_origin.
// A new route that skips route(), declares no auth, or has no permission without being listed here
// fails the "declares its access" test.

const API_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), "../../app/api");
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/** Routes that answer without a session, and why. Keys are "METHOD /api/path" as the folders spell it. */
const PUBLIC: Record<string, string> = {
  "POST /api/setup":
    "first run: creates the first owner while Baton has no user at all (409 already_set_up afterwards)",
  "POST /api/auth/login": "signing in is how a session starts",
  "POST /api/auth/login/second-factor":
    "the second step of a password sign-in (no session yet): its pending cookie and a code; limited like sign-in",
  "POST /api/auth/logout":
    "signing out must work with an ended or missing session: it clears the cookie either way (auth optional)",
  "GET /api/auth/[...nextauth]":
    "next-auth's own endpoints (csrf, session, providers, OIDC callbacks); not built with route(), next-auth answers in its own shapes",
  "POST /api/auth/[...nextauth]":
    "next-auth's own endpoints (signout, OIDC sign-in); next-auth checks its own CSRF token",
  "POST /api/invitations/lookup":
    "an invitation link's page asks what the link is for: the link's token is the credential (auth optional), limited per client address",
  "POST /api/invitations/accept":
    "a new person accepts an invitation by making their account on the invitation page (a signed-in user accepts as themselves); the token is the credential, limited per client address",
  "GET /api/auth/sso/start":
    "starting an SSO sign-in is how a session starts: redirects to the team's IdP (state, nonce, PKCE kept server-side)",
  "GET /api/auth/sso/callback":
    "where the IdP sends the browser back; the single-use state and openid-client's ID token checks authenticate it",
  "POST /api/hooks/[id]":
    "Baton's webhook receiver: the orkestr API calls it server to server; the delivery's signature over the raw body is its authentication",
  ...Object.fromEntries(
    ["GET", "POST", "PUT", "PATCH", "DELETE"].map((m) => [
      `${m} /api/[...path]`,
      "an /api path no route serves: the same JSON 404 not_found for everyone, instead of Next's HTML page",
    ]),
  ),
};

/** Signed-in routes that need no team permission: each is about the user's own account. */
const OWN_ACCOUNT: Record<string, string> = {
  "GET /api/me": "the user's own profile, session and memberships",
  "PATCH /api/me": "the user's own display name",
  "POST /api/me/password": "the user's own password (the current one is required)",
  "GET /api/me/security": "how the user's own account signs in (password, second factor), no secret",
  "GET /api/me/sessions": "the user's own live sessions",
  "DELETE /api/me/sessions/[id]": "signs out one of the user's own sessions (another user's is 404)",
  "POST /api/me/totp": "starts the user's own two-factor enrolment",
  "DELETE /api/me/totp": "turns the user's own second factor off (password or code required)",
  "POST /api/me/totp/confirm": "confirms the user's own two-factor enrolment with a code",
  "POST /api/me/totp/recovery-codes": "new recovery codes for the user's own second factor (a code required)",
  "GET /api/connections": "the user's own orkestr connections (tokens are per user), hints only",
  "GET /api/connections/status": "a live check of the user's own active connection",
  "POST /api/auth/logout-everywhere": "revokes the user's own sessions",
  "GET /api/teams": "the teams the user is a member of (names, slugs, their own roles)",
  "POST /api/teams":
    "creates a new team owned by the user (at most 20 owned); acts in no existing team, tests/teams/teams-api.test.ts",
  "PATCH /api/connections/[id]":
    "one of the user's own connections: the role checked is the one in the connection's own team (activating needs membership there, a new token connections.manage), tests/console/connection-access.test.ts",
  "GET /api/me/invitations": "the pending invitations sent to the user's own address",
  "POST /api/me/invitations/[id]/accept":
    "accepts an invitation sent to the user's own address (404 for anyone else's)",
  "POST /api/me/invitations/[id]/decline":
    "declines an invitation sent to the user's own address (404 for anyone else's)",
  "DELETE /api/connections/[id]":
    "one of the user's own connections: connections.manage in the connection's own team, tests/console/connection-access.test.ts",
};

/**
 * Signed-in routes for the instance owner only (the first owner, who set Baton up): no team
 * permission, checked in the handler. Everyone else gets 403 forbidden; tests/console/sso.test.ts too.
 */
const INSTANCE_OWNER: Record<string, string> = {
  "GET /api/admin/sso-domains": "the SSO email domains every team claims, to approve",
  "POST /api/admin/sso-domains": "approves a team's SSO email domain",
};

/** /api/v1 mutations that only read, so they need a `.read` permission. */
const READING_MUTATIONS: Record<string, string> = {
  "POST /api/v1/sandboxes/[id]/files/presign-download":
    "answers a download link (Baton's files/raw route, itself sandboxes.read); changes nothing",
  "POST /api/mcp":
    "JSON-RPC over POST: a read token may list and read; each tool's v1 call is checked by its own route",
};

/**
 * Routes that also answer a Baton-signed file link, with no session and no token (route option
 * `signedLink`, lib/server/api-tokens/signed-link.ts). Any other route declaring it fails below, and
 * every other route answers a request carrying a link (even a validly signed one) 401.
 */
const SIGNED_LINKS: Record<string, string> = {
  "GET /api/v1/sandboxes/[id]/files/raw":
    "a presign-download link handed to an API token's client: the orkestr SDK's presigned URLs need no auth header",
  "PUT /api/v1/sandboxes/[id]/files/raw":
    "a presign-upload link handed to an API token's client (its max_bytes enforced)",
};

interface RouteMethod {
  key: string;
  method: (typeof METHODS)[number];
  /** "/api/v1/sandboxes/[id]", as the folders spell it. */
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
/** The ones the matrix can call (built by route()); next-auth's catch-all is only checked to be listed. */
const WRAPPED = ROUTES.filter((r) => r.declared !== undefined);

describe("every API route declares its access", () => {
  it("finds the routes on disk", () => {
    expect(ROUTES.length).toBeGreaterThan(40);
    expect(ROUTES.map((r) => r.key)).toEqual(
      expect.arrayContaining([
        "GET /api/v1/sandboxes",
        "POST /api/v1/sandboxes/[id]/pause",
        "GET /api/v1/sandboxes/usage",
      ]),
    );
  });

  it.each(ROUTES.map((r) => [r.key, r] as const))("%s", (_key, r) => {
    if (!r.declared) {
      expect(PUBLIC[r.key], `${r.key} is not built with route() and not listed as public`).toBeDefined();
      return;
    }
    const { auth, perm } = r.declared;
    expect(r.declared.signedLink, `${r.key} declares signedLink but is not in SIGNED_LINKS (or the reverse)`).toBe(
      SIGNED_LINKS[r.key] !== undefined,
    );
    if (auth !== "user") {
      expect(PUBLIC[r.key], `${r.key} declares auth "${auth}" but is not listed as public`).toBeDefined();
      return;
    }
    expect(PUBLIC[r.key], `${r.key} requires a session but is listed as public`).toBeUndefined();
    if (!perm && INSTANCE_OWNER[r.key]) {
      expect(OWN_ACCOUNT[r.key], `${r.key} is listed both as own-account and instance-owner`).toBeUndefined();
      return;
    }
    if (!perm) {
      expect(
        OWN_ACCOUNT[r.key],
        `${r.key} requires no permission and is not listed as being about the user's own account`,
      ).toBeDefined();
      return;
    }
    expect(OWN_ACCOUNT[r.key], `${r.key} has a permission but is listed as needing none`).toBeUndefined();
    if (r.pattern.startsWith("/api/v1/")) {
      // The proxy: reads need `*.read`, mutations `*.write`, except the listed reading mutations.
      const reads = SAFE.has(r.method) || READING_MUTATIONS[r.key] !== undefined;
      expect(perm, r.key).toMatch(reads ? /\.read$/ : /\.write$/);
    }
  });

  it("lists no route that does not exist", () => {
    const keys = new Set(ROUTES.map((r) => r.key));
    for (const key of [
      ...Object.keys(PUBLIC),
      ...Object.keys(OWN_ACCOUNT),
      ...Object.keys(READING_MUTATIONS),
      ...Object.keys(INSTANCE_OWNER),
      ...Object.keys(SIGNED_LINKS),
    ])
      expect(keys.has(key), key).toBe(true);
  });
});

type Principal = Role | "no team" | CrossTeam | typeof DELEGATED_ADMIN;
const PRINCIPALS: Principal[] = [...ROLES, "no team"];

/**
 * Users with different roles in two teams. Their role must come from the team whose data the
 * request uses (the team of the connection it goes through), never from their other team:
 * - "viewer of A, owner of B": owner of their own team B first (their oldest membership), then a
 *   viewer of team A, connected to A's engine account, acting on A's sandbox. Every route refuses
 *   them what it refuses a viewer, naming A and the viewer role: the B role never leaks into A.
 * - "owner of B, viewer of A": a viewer of A first, then owner of team B, connected to B. Gets
 *   what an owner gets: the A role does not follow them into B either.
 */
const CROSS_TEAM = {
  "viewer of A, owner of B": { actsAs: "viewer", connectedTo: "A" },
  "owner of B, viewer of A": { actsAs: "owner", connectedTo: "B" },
} as const satisfies Record<string, { actsAs: Role; connectedTo: "A" | "B" }>;
type CrossTeam = keyof typeof CROSS_TEAM;
const CROSS_PRINCIPALS = Object.keys(CROSS_TEAM) as CrossTeam[];
const TEAM_B_NAME = "Team B of a two-team user";
/**
 * An admin of a team whose owners let admins manage billing (teams.admins_manage_billing): gets
 * what an admin gets plus billing.manage (lib/server/rbac.ts actingCan), and never billing.delegate.
 */
const DELEGATED_ADMIN = "admin with billing delegated";
const DELEGATED = { role: "admin", team: { adminsManageBilling: true } } as const;

describe.each(testBackends)("the route × role matrix on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));
  const users = new Map<Principal, string>();
  /** A live sandbox, so reads of sandbox routes can succeed; mutations use an id the upstream does not know. */
  let sandboxId = "";
  const MISSING = "sbx_01MATRIXMISSING0000000000";

  beforeAll(async () => {
    const teams = new Map<Principal, string | null>();
    for (const principal of PRINCIPALS) {
      const { user, teamId } = await makeUser(ctx.db(), principal === "no team" ? null : (principal as Role));
      // Through the vault, not the route: viewers may not manage connections but still read through one.
      await connectLocalEngine(user.id, { teamId });
      users.set(principal, user.id);
      teams.set(principal, teamId);
    }
    // Team A is the owner's (whose sandbox the reads use); each two-team user also owns a team B.
    const teamA = teams.get("owner")!;
    // The instance owner (lib/server/db/sso.ts) is the "owner" principal.
    await setSetting(ctx.db(), INSTANCE_OWNER_KEY, users.get("owner")!);
    const t0 = Date.now() - 60_000;
    for (const principal of CROSS_PRINCIPALS) {
      const { actsAs, connectedTo } = CROSS_TEAM[principal];
      const user = await createUser(ctx.db(), { email: `${uniq("two-teams")}@example.com`, passwordHash: null });
      // The membership of the team the user does NOT act in is the older one: the old code's pick.
      const inA = { teamId: teamA, userId: user.id, role: "viewer" as const, now: connectedTo === "A" ? t0 + 1 : t0 };
      const ownB = { name: TEAM_B_NAME, slug: slugify(uniq("team-b")), ownerId: user.id };
      const { team: teamB } =
        connectedTo === "A"
          ? await createTeamWithOwner(ctx.db(), { ...ownB, now: t0 })
          : await createTeamWithOwner(ctx.db(), { ...ownB, now: t0 + 1 });
      await addMember(ctx.db(), inA);
      expect(actsAs).toBe(connectedTo === "A" ? "viewer" : "owner");
      await connectLocalEngine(user.id, { teamId: connectedTo === "A" ? teamA : teamB.id });
      users.set(principal, user.id);
    }
    {
      const owner = await createUser(ctx.db(), { email: `${uniq("delegating")}@example.com`, passwordHash: null });
      const { team } = await createTeamWithOwner(ctx.db(), {
        name: "A team that delegates billing",
        slug: slugify(uniq("delegates")),
        ownerId: owner.id,
      });
      await updateTeam(ctx.db(), team.id, { adminsManageBilling: true });
      const admin = await createUser(ctx.db(), { email: `${uniq("billing-admin")}@example.com`, passwordHash: null });
      await addMember(ctx.db(), { teamId: team.id, userId: admin.id, role: "admin" });
      await connectLocalEngine(admin.id, { teamId: team.id });
      users.set(DELEGATED_ADMIN, admin.id);
    }
    const { cookie } = await sessionCookie(ctx.db(), users.get("owner")!);
    const res = await createSandbox(
      request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "python-3.12" } }),
      noParams,
    );
    expect(res.status).toBe(201);
    sandboxId = ((await jsonOf(res)) as { id: string }).id;
  }, 60_000);

  /**
   * Personal API tokens (issue 23), on the owner's team: a read and a write token of the owner, a
   * write token of the viewer (one Baton would not make, as if it survived a role change), and a
   * revoked and an expired one. Keyed "<role> <scope>", or "revoked" / "expired".
   */
  const tokens = new Map<string, { token: string; id: string; role: Role; scope: TokenScope }>();

  beforeAll(async () => {
    const teamId = (
      await ctx
        .db()
        .selectFrom("memberships")
        .select("team_id")
        .where("user_id", "=", users.get("owner")!)
        .executeTakeFirstOrThrow()
    ).team_id;
    const viewerTeam = (
      await ctx
        .db()
        .selectFrom("memberships")
        .select("team_id")
        .where("user_id", "=", users.get("viewer")!)
        .executeTakeFirstOrThrow()
    ).team_id;
    const make = async (
      key: string,
      role: Role,
      scope: TokenScope,
      extra: { expiresAt?: number; revoke?: boolean } = {},
    ) => {
      const t = newApiToken();
      const row = await insertApiToken(ctx.db(), {
        teamId: role === "viewer" ? viewerTeam : teamId,
        userId: users.get(role)!,
        name: key,
        hash: t.hash,
        hint: t.hint,
        scope,
        expiresAt: extra.expiresAt ?? Date.now() + 3_600_000,
      });
      if (extra.revoke)
        await ctx
          .db()
          .updateTable("api_tokens")
          .set({ revoked_at: Date.now(), revoked_reason: "revoked" })
          .where("id", "=", row.id)
          .execute();
      tokens.set(key, { token: t.token, id: row.id, role, scope });
    };
    await make("owner read", "owner", "read");
    await make("owner write", "owner", "write");
    await make("viewer write", "viewer", "write");
    await make("revoked", "owner", "write", { revoke: true });
    await make("expired", "owner", "write", { expiresAt: Date.now() - 1 });
  });

  /** The route's params: the live sandbox for reads, unknown ids for mutations (so nothing is changed). */
  function paramsFor(r: RouteMethod): Record<string, string> {
    const params: Record<string, string> = {};
    for (const [, name] of r.pattern.matchAll(/\[([^\]]+)\]/g)) {
      if (name === "port") params[name] = "3000";
      else if (name === "dlv") params[name] = "dlv_01MATRIXMISSING";
      else params[name!] = SAFE.has(r.method) ? sandboxId : MISSING;
    }
    return params;
  }

  async function send(
    r: RouteMethod,
    principal: Principal | null,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const params = paramsFor(r);
    const url = r.pattern.replace(/\[([^\]]+)\]/g, (_m, name: string) => encodeURIComponent(params[name]!));
    // A bearer request carries no cookie at all.
    const cookie =
      principal === null || headers.authorization
        ? undefined
        : (await sessionCookie(ctx.db(), users.get(principal)!)).cookie;
    const body = SAFE.has(r.method) ? undefined : {};
    return r.handler(request(url, { method: r.method, cookie, body, headers }), { params: Promise.resolve(params) });
  }

  /** A Baton refusal (as opposed to a validation or upstream answer). */
  async function refusal(res: Response): Promise<string | null> {
    if (res.status === 401) return "unauthorized";
    if (res.status !== 403) return null;
    const { code } = (await jsonOf(res.clone())) as { code?: string };
    return code === "forbidden" || code === "bad_origin" ? code : null;
  }

  it.each(WRAPPED.map((r) => [r.key, r] as const))("%s", async (_key, r) => {
    const { auth, perm } = r.declared!;
    const stream = async (res: Response) => void (await res.body?.cancel().catch(() => undefined));

    if (auth === "user" && r.declared!.tokensOnly) {
      // An endpoint for agents (the MCP endpoint): a session cookie is never read, whoever's it is.
      for (const principal of [null, ...PRINCIPALS]) {
        const res = await send(r, principal);
        expect(res.status, `${r.key} as ${principal ?? "nobody"} with a session cookie`).toBe(401);
        expect(res.headers.get("www-authenticate"), r.key).toMatch(/^Bearer /);
        expect(await jsonOf(res)).toMatchObject({ code: "unauthorized" });
      }
    } else if (auth === "user") {
      const anonymous = await send(r, null);
      expect(anonymous.status, `${r.key} without a session`).toBe(401);
      expect(await jsonOf(anonymous)).toMatchObject({ code: "unauthorized" });
      const instanceOwnerOnly = INSTANCE_OWNER[r.key] !== undefined;
      for (const principal of PRINCIPALS) {
        const allowed = instanceOwnerOnly
          ? principal === "owner"
          : perm
            ? principal !== "no team" && can(principal as Role, perm)
            : true;
        const res = await send(r, principal);
        if (instanceOwnerOnly && !allowed) {
          expect(res.status, `${r.key} as ${principal} (not the instance owner)`).toBe(403);
          expect(await jsonOf(res)).toMatchObject({ code: "forbidden" });
        } else if (allowed) {
          expect(await refusal(res), `${r.key} as ${principal} (has ${perm ?? "a session"}): ${res.status}`).toBeNull();
        } else {
          expect(res.status, `${r.key} as ${principal} (lacks ${perm})`).toBe(403);
          expect(await jsonOf(res)).toMatchObject({ code: "forbidden", detail: expect.stringContaining(perm!) });
        }
        await stream(res);
      }
      {
        const allowed = !instanceOwnerOnly && (perm ? actingCan(DELEGATED, perm) : true);
        const res = await send(r, DELEGATED_ADMIN);
        if (allowed) {
          expect(await refusal(res), `${r.key} as ${DELEGATED_ADMIN}: ${res.status}`).toBeNull();
        } else {
          expect(res.status, `${r.key} as ${DELEGATED_ADMIN} (lacks ${perm ?? "instance ownership"})`).toBe(403);
          expect(await jsonOf(res)).toMatchObject({ code: "forbidden" });
        }
        await stream(res);
      }
      for (const principal of CROSS_PRINCIPALS) {
        const { actsAs, connectedTo } = CROSS_TEAM[principal];
        const allowed = perm ? can(actsAs, perm) : true;
        const res = await send(r, principal);
        if (instanceOwnerOnly) {
          expect(res.status, `${r.key} as ${principal} (not the instance owner)`).toBe(403);
        } else if (allowed) {
          expect(await refusal(res), `${r.key} as ${principal} (acts as ${actsAs}): ${res.status}`).toBeNull();
        } else {
          expect(res.status, `${r.key} as ${principal} (acts as ${actsAs} in ${connectedTo}, lacks ${perm})`).toBe(403);
          const body = await jsonOf(res);
          expect(body).toMatchObject({ code: "forbidden", detail: expect.stringContaining(`(${actsAs})`) });
          // Refused in the team it acts in: the other team is not what the refusal is about.
          expect(body.detail).not.toContain(TEAM_B_NAME);
        }
        await stream(res);
      }
    }

    if (!SAFE.has(r.method)) {
      const cross = await send(r, "owner", { origin: "https://evil.example", "sec-fetch-site": "cross-site" });
      expect(cross.status, `${r.key} from another site`).toBe(403);
      expect(await jsonOf(cross)).toMatchObject({ code: "bad_origin" });
      const noFetchMetadata = await send(r, "owner", { origin: "https://evil.example", "sec-fetch-site": "" });
      expect(noFetchMetadata.status, `${r.key} with a foreign Origin`).toBe(403);
    }
  });

  it.each(WRAPPED.filter((r) => r.declared!.auth === "user").map((r) => [r.key, r] as const))(
    "%s with API tokens",
    async (_key, r) => {
      const { perm } = r.declared!;
      const stream = async (res: Response) => void (await res.body?.cancel().catch(() => undefined));
      const withToken = (key: string, headers: Record<string, string> = {}) =>
        send(r, null, { authorization: `Bearer ${tokens.get(key)!.token}`, ...headers });

      if (!r.pattern.startsWith("/api/v1/") && !r.declared!.tokensOnly) {
        // The console's own routes are cookie-only: a token is not a session there.
        const res = await withToken("owner write");
        expect(res.status, `${r.key} with a token`).toBe(401);
        expect(await jsonOf(res)).toMatchObject({ code: "unauthorized" });
        return;
      }
      for (const key of ["owner read", "owner write", "viewer write"]) {
        const { role, scope } = tokens.get(key)!;
        const actsAs = effectiveRole(role, scope);
        const allowed = perm ? can(actsAs, perm) : true;
        const res = await withToken(key);
        if (allowed) {
          expect(await refusal(res), `${r.key} with a ${key} token (acts as ${actsAs}): ${res.status}`).toBeNull();
        } else {
          expect(res.status, `${r.key} with a ${key} token (acts as ${actsAs}, lacks ${perm})`).toBe(403);
          expect(await jsonOf(res)).toMatchObject({ code: "forbidden", detail: expect.stringContaining(perm!) });
        }
        await stream(res);
      }
      // A read token is refused every mutation but the reading ones.
      if (!SAFE.has(r.method) && READING_MUTATIONS[r.key] === undefined) {
        const res = await withToken("owner read");
        expect(res.status, `${r.key} with a read token`).toBe(403);
      }
      // Every route's two failures count against the one test address: the limiter is its own test
      // (tests/tokens/api-tokens.test.ts), so start each route with a clean count.
      await ctx.db().deleteFrom("login_attempts").where("key", "like", "api-token:%").execute();
      for (const key of ["revoked", "expired"]) {
        const res = await withToken(key);
        expect(res.status, `${r.key} with a ${key} token`).toBe(401);
        expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
        // The v1 contract's 401 code, with Baton's reason; elsewhere (the MCP endpoint) Baton's own code.
        expect(await jsonOf(res)).toMatchObject(
          r.pattern.startsWith("/api/v1/")
            ? { code: "unauthorized", reason: "invalid_token" }
            : { code: "invalid_token" },
        );
      }
      if (!SAFE.has(r.method)) {
        // No cookie is read with a token, so another site's Origin is not a CSRF refusal.
        const cross = await withToken("owner write", {
          origin: "https://evil.example",
          "sec-fetch-site": "cross-site",
        });
        expect(await refusal(cross), `${r.key} with a token from another site`).not.toBe("bad_origin");
        await stream(cross);
      }
    },
  );

  it.each(WRAPPED.filter((r) => r.declared!.auth === "user").map((r) => [r.key, r] as const))(
    "%s with a signed file link and no other credential",
    async (_key, r) => {
      const params = paramsFor(r);
      const base = r.pattern.replace(/\[([^\]]+)\]/g, (_m, name: string) => encodeURIComponent(params[name]!));
      const teamSlug = (
        await ctx
          .db()
          .selectFrom("teams")
          .innerJoin("api_tokens", "api_tokens.team_id", "teams.id")
          .select("teams.slug")
          .where("api_tokens.id", "=", tokens.get("owner write")!.id)
          .executeTakeFirstOrThrow()
      ).slug;
      // A link Baton really signed, for this method and sandbox, by a live write token of the owner.
      const link = fileLinkQuery({
        method: r.method === "PUT" ? "PUT" : "GET",
        team: teamSlug,
        sandboxId: params.id ?? "",
        path: "/tmp/matrix",
        exp: Math.floor(Date.now() / 1000) + 60,
        tokenId: tokens.get("owner write")!.id,
      });
      const call = (query: string) =>
        r.handler(request(`${base}?${query}`, { method: r.method, body: SAFE.has(r.method) ? undefined : {} }), {
          params: Promise.resolve(params),
        });
      const res = await call(link);
      if (SIGNED_LINKS[r.key] === undefined) {
        // No other route lets a link stand in for a session or a token.
        expect(res.status, `${r.key} with a signed link`).toBe(401);
        expect(await jsonOf(res)).toMatchObject({ code: "unauthorized" });
        return;
      }
      // Past every access check (the file does not exist: the upstream's 404).
      expect([401, 403, 410], `${r.key} with its signed link: ${res.status}`).not.toContain(res.status);
      await res.body?.cancel().catch(() => undefined);
      const forged = await call(link.replace(/sig=[0-9a-f]+/, `sig=${"0".repeat(64)}`));
      expect(forged.status, `${r.key} with a forged signature`).toBe(403);
      expect(await jsonOf(forged)).toMatchObject({ code: "invalid_signature" });
    },
  );

  it("the viewer of A who owns B reads A's sandbox, and is refused exec and a terminal in it", async () => {
    const { cookie } = await sessionCookie(ctx.db(), users.get("viewer of A, owner of B")!);
    const at = (suffix = "") => `/api/v1/sandboxes/${sandboxId}${suffix}`;
    const p = { params: Promise.resolve({ id: sandboxId }) };
    const read = await getSandbox(request(at(), { cookie }), p);
    expect(read.status).toBe(200);
    expect(await jsonOf(read)).toMatchObject({ id: sandboxId });
    const exec = await execInSandbox(
      request(at("/exec"), { method: "POST", cookie, body: { command: "echo $SECRET" } }),
      p,
    );
    expect(exec.status).toBe(403);
    expect(await jsonOf(exec)).toMatchObject({ code: "forbidden", detail: expect.stringContaining("(viewer)") });
    const pty = await openTerminal(request(at("/pty"), { method: "POST", cookie, body: {} }), p);
    expect(pty.status).toBe(403);
  });
});
