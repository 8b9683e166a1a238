import "server-only";
import { z } from "zod";
import { isAuditAction, type AuditAction } from "../audit-actions";
import { HOST_NOT_ALLOWED, hostAllowed, originAllowed } from "../host-policy";
import { knownBytes } from "./request-bytes";
import { accessLost, openedWith, sessionEnded, type AccessLoss } from "./access-watch";
import { TeamNotFoundError, type ActingTeam } from "./acting-team";
import { bearerOf, resolveBearer, tokenCredential, TokenTeamMismatchError } from "./api-tokens/bearer";
import { resolveSignedLink } from "./api-tokens/signed-link";
import type { FileLinkClaims } from "./file-link-signature";
import { contractErrorResponse, markInputPlace } from "./v1-contract-errors";
import { actingTeam, getUserFromRequest, refusal, teamChoiceOf, teamNotFound, type CurrentUser } from "./auth";
import { recordAudit, type AuditEvent } from "./db/audit";
import { getMigratedDb } from "./db/index";
import type { User } from "./db/users";
import { AppError, errorResponse, validationError } from "./errors";
import { newId } from "./ids";
import { actingCan, type Permission } from "./rbac";
import { clientIp, isSecureRequest, userAgent } from "./request-info";

// The one wrapper every API route handler is:
//
//   // POST /api/things/[id]/pause – suspend a thing
//   export const POST = route({ auth: "user", perm: "sandboxes.write", params: ThingParams, body: PauseBody },
//     async ({ user, params, body }) => …);
//
// In order, it: refuses Host names Baton does not serve (421 host_not_allowed); refuses cross-site
// mutations (403 bad_origin); resolves the session (401 when required and missing) and the team the
// request acts in, with the connection it goes through (lib/server/acting-team.ts) — on /api/v1 an
// `Authorization: Bearer bat_…` API token instead (lib/server/api-tokens/bearer.ts: no cookie read,
// so no Origin check; its team fixed, its role narrowed by its scope; 401 invalid_token with
// WWW-Authenticate); or, on a route declared `signedLink` (files/raw), a Baton-signed file link in
// the query, which acts as the API token that made it (lib/server/api-tokens/signed-link.ts); checks the
// permission in that team (403 forbidden); awaits and zod-parses params, query and the
// JSON body, counted as it arrives (413 past maxBodyBytes, 400 bad_request for unreadable JSON, 422
// validation_error); runs the handler; records the audit event; and turns anything thrown into
// `{ detail, code }` with the right status (lib/server/errors.ts). Handlers never try/catch and never
// read the session.

export type AuthMode = "user" | "optional" | "public";

type Schema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteOptions<
  A extends AuthMode,
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
> {
  /** "user": a live session is required; "optional": resolved when present; "public": not looked at. */
  auth: A;
  /** Permission the user's role in the acting team must grant (needs auth "user"). */
  perm?: A extends "user" ? Permission : never;
  /** Route params (the awaited `ctx.params`). */
  params?: P;
  /** The query string, as an object (repeated keys become arrays). */
  query?: Q;
  /** The JSON request body. Without a schema the body is not read. */
  body?: B;
  /** The body may be left out (contract: "the body is optional"): an empty body parses as `{}`. */
  optionalBody?: boolean;
  /** Audit action ("resource.verb") recorded after a successful (< 400) answer to a signed-in user. */
  audit?: AuditAction;
  /** Largest accepted body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /**
   * API tokens outside /api/v1: "only" for an endpoint that agents, not browsers, call (the MCP
   * endpoint): a Bearer token is required, the cookie is never read. `challenge` is then the 401's
   * WWW-Authenticate (e.g. with the endpoint's resource metadata).
   */
  tokens?: { only: true; challenge: (req: Request, presented: boolean) => string };
  /**
   * The route also serves Baton-signed file links (lib/server/file-link-signature.ts): a request
   * whose query carries `sig` is authorized by the link alone, no cookie and no Authorization read,
   * and acts as the API token that made it (lib/server/api-tokens/signed-link.ts: 403
   * invalid_signature, 410 url_expired, 403 link_revoked). Only files/raw declares it; the route ×
   * role matrix (tests/console/route-matrix.test.ts SIGNED_LINKS) fails for any other route that does.
   * Needs auth "user", a permission, and an `id` route param (the sandbox the link is signed for).
   */
  signedLink?: true;
}

type Principal<A extends AuthMode> = A extends "user" ? CurrentUser : A extends "optional" ? CurrentUser | null : null;

export interface AuditExtra {
  /** The target's id (older callers); its type is then the action's resource ("sandbox.pause" → sandbox). */
  target?: string | null;
  targetType?: string | null;
  targetId?: string | null;
  /** "ok" (default) or a refusal's code. */
  result?: string;
  data?: unknown;
  teamId?: string | null;
  userId?: string | null;
  /** For actions by someone not signed in yet (sign-in): their email. */
  actorEmail?: string | null;
  credential?: string | null;
}

/** The header every answer of route() carries: the id its audit rows have too. */
export const REQUEST_ID_HEADER = "x-request-id";

/** What a refused request is recorded as: its action, and the target as far as the request names it. */
export interface RefusedAction {
  action: AuditAction;
  targetType: string | null;
  targetId: string | null;
  /** The target is the acting team or the signed-in user, which the path does not name. */
  targetIs?: "team" | "user";
}

interface ConsoleRefusal {
  action: AuditAction;
  targetType: string;
  /** The path parameter naming the target (`:id` in the pattern), or who it is when none does. */
  target?: `:${string}` | "team" | "user";
}

/**
 * The console's own routes (everything under /api that is not the v1 contract), by method and
 * pattern: their paths do not follow the contract's collection/id/verb shape, so their refusals are
 * named here, as their successes are, and never guessed from the path (a refused revocation of an
 * invitation, DELETE /api/team/invitations/:id, is invitation.revoke on that invitation, not a
 * team.delete). A console route missing here is recorded as request.refused, and
 * tests/console/audit-catalogue.test.ts fails for it.
 */
const CONSOLE_REFUSALS: Record<string, ConsoleRefusal> = {
  "POST /api/teams": { action: "team.create", targetType: "team" },
  "PATCH /api/team": { action: "team.update", targetType: "team", target: "team" },
  "DELETE /api/team": { action: "team.delete", targetType: "team", target: "team" },
  "POST /api/team/transfer-ownership": { action: "team.ownership_transfer", targetType: "team", target: "team" },
  "POST /api/team/leave": { action: "member.leave", targetType: "team", target: "team" },
  "POST /api/team/invitations": { action: "invitation.create", targetType: "invitation" },
  "DELETE /api/team/invitations/:id": { action: "invitation.revoke", targetType: "invitation", target: ":id" },
  "POST /api/team/invitations/:id/resend": { action: "invitation.resend", targetType: "invitation", target: ":id" },
  "PATCH /api/team/members/:userId": { action: "member.role_change", targetType: "member", target: ":userId" },
  "DELETE /api/team/members/:userId": { action: "member.remove", targetType: "member", target: ":userId" },
  "POST /api/team/members/:userId/disable": { action: "member.disable", targetType: "member", target: ":userId" },
  "POST /api/team/members/:userId/enable": { action: "member.enable", targetType: "member", target: ":userId" },
  "POST /api/team/members/:userId/unlock": { action: "member.unlock", targetType: "member", target: ":userId" },
  "DELETE /api/team/members/:userId/sessions/:sessionId": {
    action: "member.session_revoke",
    targetType: "member",
    target: ":userId",
  },
  "PUT /api/team/sso": { action: "sso.config_update", targetType: "team", target: "team" },
  "DELETE /api/team/sso": { action: "sso.config_delete", targetType: "team", target: "team" },
  "POST /api/team/sso/test": { action: "sso.test", targetType: "team", target: "team" },
  "POST /api/admin/sso-domains": { action: "sso.domain_approve", targetType: "sso" },
  "PATCH /api/audit/settings": { action: "audit.settings_update", targetType: "team", target: "team" },
  "PATCH /api/usage/rates": { action: "usage.rates_update", targetType: "team", target: "team" },
  "PATCH /api/me": { action: "user.update", targetType: "user", target: "user" },
  "POST /api/me/password": { action: "user.password_change", targetType: "user", target: "user" },
  "DELETE /api/me/sessions/:id": { action: "session.revoke", targetType: "user", target: "user" },
  "POST /api/me/totp": { action: "user.totp_enable", targetType: "user", target: "user" },
  "POST /api/me/totp/confirm": { action: "user.totp_enable", targetType: "user", target: "user" },
  "DELETE /api/me/totp": { action: "user.totp_disable", targetType: "user", target: "user" },
  "POST /api/me/totp/recovery-codes": { action: "user.recovery_codes_regenerate", targetType: "user", target: "user" },
  "POST /api/me/invitations/:id/accept": { action: "invitation.accept", targetType: "invitation", target: ":id" },
  "POST /api/me/invitations/:id/decline": { action: "invitation.decline", targetType: "invitation", target: ":id" },
  "POST /api/invitations/accept": { action: "invitation.accept", targetType: "invitation" },
  "POST /api/auth/logout": { action: "auth.sign_out", targetType: "user", target: "user" },
  "POST /api/auth/logout-everywhere": { action: "auth.sign_out_everywhere", targetType: "user", target: "user" },
  "POST /api/connections": { action: "connection.create", targetType: "connection" },
  "PATCH /api/connections/:id": { action: "connection.update", targetType: "connection", target: ":id" },
  "DELETE /api/connections/:id": { action: "connection.delete", targetType: "connection", target: ":id" },
  "POST /api/connections/local-engine": { action: "connection.local_engine", targetType: "connection" },
  "POST /api/hooks/receivers": { action: "webhook_receiver.create", targetType: "webhook_receiver" },
  "PATCH /api/usage/alerts": { action: "spend_alert.settings_update", targetType: "team", target: "team" },
  "PUT /api/usage/caps": { action: "spend_cap.set", targetType: "spend_cap" },
  "DELETE /api/usage/caps/:id": { action: "spend_cap.delete", targetType: "spend_cap", target: ":id" },
  "POST /api/tokens": { action: "api_token.create", targetType: "api_token" },
  // An MCP request refused before any tool ran (a token of the wrong scope, a revoked token…).
  "POST /api/mcp": { action: "mcp.tool_call", targetType: "team", target: "team" },
  "DELETE /api/tokens/:id": { action: "api_token.revoke", targetType: "api_token", target: ":id" },
  "DELETE /api/hooks/receivers/:id": {
    action: "webhook_receiver.delete",
    targetType: "webhook_receiver",
    target: ":id",
  },
};

const CONSOLE_PATTERNS = Object.entries(CONSOLE_REFUSALS).map(([key, refusal]) => {
  const [method, pattern] = key.split(" ") as [string, string];
  return { method, segs: pattern.split("/").filter(Boolean), refusal };
});

function consoleRefusal(method: string, segs: string[]): RefusedAction | null {
  for (const p of CONSOLE_PATTERNS) {
    if (p.method !== method || p.segs.length !== segs.length) continue;
    const params: Record<string, string> = {};
    if (!p.segs.every((s, i) => (s.startsWith(":") ? ((params[s] = segs[i]!), true) : s === segs[i]))) continue;
    const { action, targetType, target } = p.refusal;
    if (target === "team" || target === "user") return { action, targetType, targetId: null, targetIs: target };
    return { action, targetType, targetId: target ? (params[target] ?? "").slice(0, 300) || null : null };
  }
  return null;
}

/** Verbs a refused v1 request is audited as when its route declares none: the same as the success's. */
const REFUSED_ACTION: Record<string, AuditAction> = {
  "DELETE sandbox": "sandbox.terminate",
  "POST sandbox snapshots": "snapshot.create",
  "POST sandbox timeout": "sandbox.set_timeout",
  "POST sandbox preview_token": "sandbox.preview_token_rotate",
  "POST sandbox exec stream": "sandbox.exec",
  "POST sandbox files": "sandbox.file_write",
  "DELETE sandbox files": "sandbox.file_delete",
  "POST sandbox files batch": "sandbox.file_write_batch",
  "PUT sandbox files raw": "sandbox.file_upload",
  "POST sandbox files presign_upload": "sandbox.file_presign_upload",
  "POST sandbox files presign_download": "sandbox.file_presign_download",
  "POST sandbox pty": "sandbox.terminal_open",
  "DELETE sandbox pty": "sandbox.terminal_close",
  "POST webhook deliveries redeliver": "webhook.redeliver",
};
const SEGMENT = /^[a-z][a-z0-9_-]{0,40}$/;

/**
 * The action and target a refused mutation is recorded as, from its method and path. The console's
 * own routes by their pattern (CONSOLE_REFUSALS). The v1 contract's by its shape, collection/id/verb:
 * `DELETE /api/v1/sandboxes/sbx_1` → sandbox.terminate on sandbox sbx_1, `POST /api/v1/sandboxes/sbx_1/pause`
 * → sandbox.pause, `POST /api/v1/volumes` → volume.create. A name that is not in the catalogue
 * (lib/audit-actions.ts), or a path neither knows, is recorded as request.refused, with the method and
 * path in its data.
 */
export function refusedAction(method: string, pathname: string): RefusedAction {
  let segs: string[];
  try {
    segs = pathname.split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    return { action: "request.refused", targetType: null, targetId: null };
  }
  const unknown: RefusedAction = { action: "request.refused", targetType: null, targetId: null };
  if (segs[0] !== "api") return unknown;
  if (segs[1] !== "v1") return consoleRefusal(method, segs) ?? unknown;
  const [collection, id, ...sub] = segs.slice(2);
  if (!collection || !SEGMENT.test(collection)) return unknown;
  const resource = collection
    .replace(/ies$/, "y")
    .replace(/(x|ss)es$/, "$1")
    .replace(/s$/, "")
    .replace(/-/g, "_");
  const targetId = id ? id.slice(0, 300) : null;
  const verbs = sub.filter((s) => SEGMENT.test(s)).map((s) => s.replace(/-/g, "_"));
  const special = REFUSED_ACTION[[method, resource, ...verbs].join(" ")];
  const derived =
    special ??
    `${resource}.${
      verbs.length > 0
        ? verbs.join("_")
        : method === "DELETE"
          ? "delete"
          : method === "POST" && !id
            ? "create"
            : "update"
    }`;
  return isAuditAction(derived)
    ? { action: derived, targetType: resource, targetId }
    : { action: "request.refused", targetType: resource, targetId };
}

/**
 * The audited refusals: the access checks' answers and a spend cap's block (not input mistakes, not
 * upstream state conflicts).
 */
const AUDITED_REFUSALS = new Set([401, 402, 403, 404]);

export interface RouteContext<
  A extends AuthMode,
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
> {
  req: Request;
  /** The signed-in user: always set with auth "user", maybe with "optional", never with "public". */
  user: A extends "user" ? User : User | null;
  /** The whole session check: user, session row, memberships. */
  current: Principal<A>;
  /**
   * The team the request acts in, the user's role there, and the connection bound to that team
   * that the request reaches the orkestr API with (null without a user or team). Proxy calls take
   * this, so the role checked and the connection used cannot come from two teams.
   */
  team: ActingTeam | null;
  /**
   * For answers that stay open (streams): whether what allowed this request still holds, asked
   * again now (the session, the membership of `team`, the route's permission, the connection).
   * Null while it does; else what was lost.
   */
  recheck: () => Promise<AccessLoss | null>;
  params: Out<P>;
  query: Out<Q>;
  body: Out<B>;
  ip: string | null;
  userAgent: string | null;
  /** The request came over HTTPS (cookie flags). */
  secure: boolean;
  /** The signed file link that authorized this request (route option `signedLink`), else null. */
  signedLink: FileLinkClaims | null;
  /** Records an audit event for this request (user, team, IP, user agent, request id filled in); null if it could not be written. */
  audit(action: AuditAction, extra?: AuditExtra): Promise<AuditEvent | null>;
}

/** Next's route handler signature. */
export type RouteHandler = (
  req: Request,
  ctx: { params: Promise<Record<string, string | string[] | undefined>> },
) => Promise<Response>;

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
const DEFAULT_MAX_BODY = 1024 * 1024;

/**
 * DNS-rebinding defence: a page on another name that resolves to this server (evil.example →
 * 127.0.0.1) sends `Host: evil.example`. Only the names of lib/host-policy.ts are served: 421.
 * The console's own server refuses these before Next sees them; this is the handler's own check.
 */
export function checkHost(req: Request): AppError | null {
  return hostAllowed(req.headers.get("host")) ? null : new AppError("host_not_allowed", HOST_NOT_ALLOWED.detail);
}

/**
 * CSRF defence for cookie-authenticated mutations: the browser's `Sec-Fetch-Site` must say
 * same-origin (not same-site: sandbox previews on *.sbx.localhost are same-site with localhost);
 * without it, `Origin` must be one of Baton's own origins (BATON_URL or the loopback defaults, plus
 * BATON_ALLOWED_HOSTS): never compared with the request's own Host or X-Forwarded-Host, which the
 * sender chooses. A request with neither is not from a browser page.
 */
export function checkOrigin(req: Request): AppError | null {
  if (SAFE_METHODS.has(req.method)) return null;
  const refuse = () =>
    new AppError("bad_origin", "This request came from another site and was refused. Reload Baton and try again.");
  const site = req.headers.get("sec-fetch-site")?.toLowerCase();
  if (site) return site === "same-origin" || site === "none" ? null : refuse();
  const origin = req.headers.get("origin");
  if (origin === null) return null;
  return originAllowed(origin) ? null : refuse();
}

function queryObject(url: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of url.searchParams) {
    const prev = out[key];
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** A Content-Length over the limit is refused before a byte is read. */
function refuseDeclaredLength(
  req: Request,
  maxBytes: number,
  tooLargeError: (maxBytes: number) => Error = tooLarge,
): void {
  const declared = Number(req.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLargeError(maxBytes);
}

const tooLarge = (maxBytes: number) =>
  new AppError("payload_too_large", `The request body is larger than ${Math.floor(maxBytes / 1024)} KiB.`);

/**
 * A request body as the bytes that arrived, given up (413 payload_too_large, or what `tooLarge`
 * makes) the moment it passes `maxBytes`: a chunked body has no Content-Length to refuse up front,
 * and `req.arrayBuffer()` would hold all of it in memory before anyone could count.
 */
export async function readBodyBytes(
  req: Request,
  maxBytes: number,
  tooLargeError: (maxBytes: number) => Error = tooLarge,
): Promise<Uint8Array> {
  refuseDeclaredLength(req, maxBytes, tooLargeError);
  const known = knownBytes(req);
  if (known) {
    if (known.byteLength > maxBytes) throw tooLargeError(maxBytes);
    return known;
  }
  if (!req.body) return new Uint8Array();
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        // Stop reading: the rest is never taken off the socket into memory.
        void reader.cancel().catch(() => undefined);
        throw tooLargeError(maxBytes);
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks);
}

/** readBodyBytes() as UTF-8 text, a leading BOM dropped (as `text()` does). */
export async function readBodyText(req: Request, maxBytes: number): Promise<string> {
  return new TextDecoder("utf-8").decode(await readBodyBytes(req, maxBytes));
}

async function readJsonBody(req: Request, maxBytes: number, optional = false): Promise<unknown> {
  refuseDeclaredLength(req, maxBytes);
  const type = req.headers.get("content-type");
  if (type !== null && !/^application\/([\w.+-]+\+)?json\b/i.test(type)) {
    throw new AppError("unsupported_media_type", "Send the request body as JSON (Content-Type: application/json).");
  }
  const text = await readBodyText(req, maxBytes);
  if (text.trim() === "") {
    if (optional) return {};
    throw new AppError("bad_request", "The request body is empty; it must be a JSON document.");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError("bad_request", "The request body is not valid JSON.");
  }
}

function parseWith<S extends Schema>(schema: S, value: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw markInputPlace(
      validationError(parsed.error, where),
      where === "the URL" ? "path" : where === "the query string" ? "query" : "body",
    );
  return parsed.data;
}

function withNoStore(response: Response): Response {
  try {
    if (!response.headers.has("cache-control")) response.headers.set("cache-control", "no-store");
  } catch {
    // immutable headers (Response.redirect): leave them
  }
  return response;
}

function withRequestId(response: Response, requestId: string): Response {
  try {
    if (!response.headers.has(REQUEST_ID_HEADER)) response.headers.set(REQUEST_ID_HEADER, requestId);
  } catch {
    // immutable headers (Response.redirect): leave them
  }
  return response;
}

/** The access rules a handler was declared with (what the route × role matrix test reads). */
export interface DeclaredRoute {
  auth: AuthMode;
  perm: Permission | undefined;
  /** Bearer API tokens only (no session cookie is read). */
  tokensOnly: boolean;
  /** Also answers Baton-signed file links, without a session or a Bearer token (option `signedLink`). */
  signedLink: boolean;
}
const declarations = new WeakMap<RouteHandler, DeclaredRoute>();

/**
 * How a route handler was declared, or undefined when it was not built by route(). Lets the
 * route × role matrix test derive each route's expected answers from the route itself.
 */
export function declaredRoute(handler: unknown): DeclaredRoute | undefined {
  return typeof handler === "function" ? declarations.get(handler as RouteHandler) : undefined;
}

export function route<
  A extends AuthMode,
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
>(options: RouteOptions<A, P, Q, B>, handler: (ctx: RouteContext<A, P, Q, B>) => unknown): RouteHandler {
  if (options.perm && options.auth !== "user") throw new Error('route(): a permission needs auth: "user"');
  if (options.signedLink && !(options.auth === "user" && options.perm))
    throw new Error('route(): signedLink needs auth: "user" and a permission');
  const handle: RouteHandler = async (req, nextCtx) => {
    const url = new URL(req.url);
    const label = `${req.method} ${url.pathname}`;
    const ip = clientIp(req.headers);
    const requestId = newId("req");
    const ua = userAgent(req.headers);
    let current: CurrentUser | null = null;
    let team: ActingTeam | null = null;
    // A personal API token, on the v1 contract only (the console's own routes stay cookie-only):
    // then it alone says who is asking, the cookie is not read, and so no CSRF check is needed.
    const v1 = url.pathname === "/api/v1" || url.pathname.startsWith("/api/v1/");
    const tokenOnly = options.tokens?.only === true;
    // A signed file link is its own credential: the cookie and any Authorization header are not read.
    const signed = options.signedLink === true && url.searchParams.has("sig");
    const bearer = !signed && options.auth !== "public" && (v1 || tokenOnly) ? bearerOf(req) : null;
    let link: FileLinkClaims | null = null;
    let linkSandbox = "";
    try {
      const hostError = checkHost(req);
      if (hostError) throw hostError;
      // No ambient credential (cookie) on a bearer or signed-link request: nothing to forge cross-site.
      const originError = bearer === null && !signed ? checkOrigin(req) : null;
      if (originError) throw originError;

      if (signed) {
        const raw = (await nextCtx?.params)?.id;
        linkSandbox = typeof raw === "string" ? raw : "";
        ({ current, team, link } = await resolveSignedLink(await getMigratedDb(), req, {
          sandboxId: linkSandbox,
          perm: options.perm!,
          ip,
        }));
      } else if (bearer !== null) {
        ({ current, team } = await resolveBearer(await getMigratedDb(), req, bearer, ip));
      } else if (tokenOnly) {
        throw new AppError(
          "unauthorized",
          "This endpoint needs a Baton API token: Authorization: Bearer bat_… (make one in Settings → API tokens).",
        );
      } else if (options.auth !== "public") {
        current = await getUserFromRequest(req);
        if (!current && options.auth === "user")
          throw new AppError(
            "unauthorized",
            !v1 && bearerOf(req) !== null
              ? "API tokens are accepted only by /api/v1; this route needs a signed-in session."
              : "You are not signed in, or your session has ended. Sign in again.",
          );
        if (current) {
          try {
            team = actingTeam(current, teamChoiceOf(req));
          } catch (err) {
            // Naming a team one is not a member of: the same 404 whether it exists or not. Only a
            // route that requires a session refuses; an optional one goes on without a team.
            if (!(err instanceof TeamNotFoundError)) throw err;
            if (options.auth === "user") throw teamNotFound(err);
          }
        }
      }

      if (options.perm && !actingCan(team, options.perm))
        throw new AppError("forbidden", refusalFor(current, team, options.perm));

      const params = options.params ? parseWith(options.params, (await nextCtx?.params) ?? {}, "the URL") : undefined;
      const query = options.query ? parseWith(options.query, queryObject(url), "the query string") : undefined;
      const body = options.body
        ? parseWith(
            options.body,
            await readJsonBody(req, options.maxBodyBytes ?? DEFAULT_MAX_BODY, options.optionalBody),
            "the request body",
          )
        : undefined;

      const audit = (action: AuditAction, extra: AuditExtra = {}) => recordFor(action, extra);

      const opened = team && options.perm ? openedWith(team, options.perm, "stream") : null;
      const signedIn = current;
      const startedAt = Date.now();
      const recheck = async (): Promise<AccessLoss | null> => {
        if (!signedIn) return null;
        const now =
          link !== null
            ? await resolveSignedLink(await getMigratedDb(), req, {
                sandboxId: linkSandbox,
                perm: options.perm!,
                ip,
                now: startedAt,
                recheck: true,
              }).then(
                (p) => p.current,
                () => null,
              )
            : bearer !== null
              ? await resolveBearer(await getMigratedDb(), req, bearer, ip, { recheck: true }).then(
                  (p) => p.current,
                  () => null,
                )
              : await getUserFromRequest(req);
        if (!now || now.user.id !== signedIn.user.id) return sessionEnded(await getMigratedDb(), signedIn.user.id);
        return opened ? accessLost(now, opened) : null;
      };

      const ctx = {
        req,
        user: current?.user ?? null,
        current,
        team,
        recheck,
        params,
        query,
        body,
        ip,
        userAgent: ua,
        secure: isSecureRequest(req),
        signedLink: link,
        audit,
      } as RouteContext<A, P, Q, B>;

      const result = await handler(ctx);
      const response =
        result instanceof Response
          ? result
          : result === undefined
            ? new Response(null, { status: 204 })
            : Response.json(result);
      if (options.audit && current && response.status < 400) await audit(options.audit);
      return withRequestId(withNoStore(response), requestId);
    } catch (err) {
      let response = errorResponse(err, label);
      if (v1) response = await contractErrorResponse(response, err, { bearer: bearer !== null });
      const code =
        !SAFE_METHODS.has(req.method) && (AUDITED_REFUSALS.has(response.status) || response.status === 429)
          ? await response
              .clone()
              .json()
              .then((b: { code?: unknown }) => (typeof b.code === "string" ? b.code : String(response.status)))
              .catch(() => String(response.status))
          : null;
      // A token presented in the wrong team has no principal yet: audited as its holder's.
      const holder = err instanceof TokenTeamMismatchError ? err.holder : null;
      // Of the 429s, only an API token's concurrency limit is a decision worth the audit log.
      if ((current || holder) && code !== null && (response.status !== 429 || code === "concurrency_limit")) {
        const refused = refusedAction(req.method, url.pathname);
        const targetId =
          refused.targetIs === "team"
            ? (team?.team.id ?? holder?.teamId ?? null)
            : refused.targetIs === "user"
              ? (current?.user.id ?? holder!.userId)
              : refused.targetId;
        await recordFor(options.audit ?? refused.action, {
          targetType: refused.targetType,
          targetId,
          result: code,
          data: { method: req.method, path: url.pathname },
          ...(holder && !current ? holder : {}),
        });
      }
      if (response.status === 401 && (v1 || tokenOnly)) {
        // RFC 6750: a 401 names the scheme; for a token that was presented, why it failed.
        response.headers.set(
          "www-authenticate",
          options.tokens
            ? options.tokens.challenge(req, bearer !== null)
            : bearer !== null
              ? 'Bearer realm="baton", error="invalid_token"'
              : 'Bearer realm="baton"',
        );
      }
      return withRequestId(response, requestId);
    }

    async function recordFor(action: AuditAction, extra: AuditExtra): Promise<AuditEvent | null> {
      const targetId = extra.targetId !== undefined ? extra.targetId : (extra.target ?? null);
      const targetType =
        extra.targetType !== undefined ? extra.targetType : targetId !== null ? action.split(".")[0]! : null;
      try {
        return await recordAudit(await getMigratedDb(), {
          action,
          userId: extra.userId !== undefined ? extra.userId : (current?.user.id ?? null),
          teamId: extra.teamId !== undefined ? extra.teamId : (team?.team.id ?? null),
          actorEmail: extra.actorEmail !== undefined ? extra.actorEmail : (current?.user.email ?? undefined),
          credential:
            extra.credential !== undefined
              ? extra.credential
              : current?.via.kind === "token"
                ? tokenCredential({ id: current.via.tokenId, name: current.via.tokenName })
                : current
                  ? "session"
                  : null,
          target: extra.target ?? targetId,
          targetType,
          targetId,
          result: extra.result ?? "ok",
          data: extra.data,
          ip,
          userAgent: ua,
          requestId,
        });
      } catch (err) {
        console.error(`[baton] ${label}: could not record audit event ${action}:`, err);
        return null;
      }
    }
  };
  declarations.set(handle, {
    auth: options.auth,
    perm: options.perm,
    tokensOnly: options.tokens?.only === true,
    signedLink: options.signedLink === true,
  });
  return handle;
}

/** Why the acting team does not grant `permission`; for a token, that its scope is what narrows it. */
function refusalFor(current: CurrentUser | null, team: ActingTeam | null, permission: Permission): string {
  if (current?.via.kind !== "token" || !team) return refusal(team, permission);
  const scope = current.via.scope === "read" ? "read only" : "read and write, never the team's administration";
  return `This API token (${scope}) acts as ${team.role} in ${team.team.name}, which does not allow this (${permission}).`;
}

/** A JSON response with a status (for handlers that answer something else than 200). */
export function json(data: unknown, init: ResponseInit = {}): Response {
  return Response.json(data, init);
}
