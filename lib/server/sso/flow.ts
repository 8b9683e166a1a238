import "server-only";
import { ssoMessage, type SsoErrorCode } from "../../sso-messages";
import { changeMemberRole, removeTeamMember } from "../access";
import { recordAudit } from "../db/audit";
import type { Db } from "../db/index";
import { createSession, SESSION_TTL_MS } from "../db/sessions";
import {
  createSsoTransaction,
  emailDomain,
  findSsoDomain,
  findSsoIdentity,
  getSsoClientSecret,
  getSsoConfig,
  linkSsoIdentity,
  recordSsoTest,
  roleRank,
  takeSsoTransaction,
  touchSsoIdentity,
  type SsoConfig,
  type SsoPurpose,
} from "../db/sso";
import { addMember, getMembership, getTeam, type Role } from "../db/teams";
import { createUser, findUserByEmail, findUserById, normalizeEmail, type User } from "../db/users";
import { getEnv } from "../env";
import { idpConfiguration, IdpUnreachableError, oidc } from "./client";

// One SSO sign-in, from the redirect to the IdP to a Baton session (see client.ts for why
// openid-client is driven directly). The rules, in the order they are checked at the callback:
// 1. the state names a transaction that is unused and unexpired (taken at once: single use);
// 2. openid-client exchanges the code with the PKCE verifier and verifies the ID token (signature,
//    iss, aud, exp, nonce): any failure is `token_rejected`;
// 3. the person is the IdP's (issuer, subject); an email is required and `email_verified` must be true;
// 4. the email's domain is one of the team's SSO domains, and the instance owner has approved it
//    for this team: until then nobody signs in through it (no account, link or membership), so a
//    team cannot claim someone else's domain and mint accounts for its addresses with its own IdP;
// 5. the allowed-groups gate: with allowed groups set, a missing group claim or no allowed group
//    refuses (and removes an existing non-owner membership: removed at the IdP, removed here);
// 6. the role: the highest role a group maps to, else the default role (member or viewer). Without
//    a group claim and without a gate, the default role. An existing member's role follows the
//    groups only while group sync is on, and an owner is never changed by the IdP;
// 7. a new (issuer, subject) becomes a new account, or is linked to the existing account with that
//    email (the domain is approved for this team, rule 4);
// 8. the session lasts min(30 days, the team's SSO session maximum), and the identity's
//    last_sign_in_at (which keeps the person's API tokens of this team working,
//    lib/server/api-tokens/bearer.ts) is set only now that the sign-in succeeded.

export class SsoFailure extends Error {
  override name = "SsoFailure";
  /** Set once the transaction is known: a failed test is reported on /settings/sso, not at /login. */
  purpose: SsoPurpose | null = null;
  constructor(
    readonly code: SsoErrorCode,
    readonly detail: string,
    readonly teamId: string | null = null,
    readonly reason: string = code,
  ) {
    super(detail);
  }
}

/**
 * Baton's origin as the browser sees it: BATON_URL when set, else the request's Host (which the
 * front door and route() have checked against lib/host-policy.ts) with X-Forwarded-Proto (which the
 * front door strips unless BATON_TRUSTED_PROXIES trusts the proxy). Never `req.url`'s origin: behind
 * the console server that is the address Next was told to listen on, not the name the browser used.
 */
export function publicOrigin(headers: Headers): string {
  const configured = getEnv().BATON_URL;
  if (configured) return configured.replace(/\/+$/, "");
  const proto = headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https" ? "https" : "http";
  return `${proto}://${headers.get("host") ?? "localhost"}`;
}

/**
 * Where the IdP sends the browser back: register this at the IdP. The one source of the redirect
 * URI shown on /settings/sso, sent in the authorization request and sent again at the token endpoint.
 */
export function redirectUri(headers: Headers): string {
  return `${publicOrigin(headers)}/api/auth/sso/callback`;
}

async function configuredClient(db: Db, config: SsoConfig) {
  const secret = await getSsoClientSecret(db, config.teamId);
  try {
    return await idpConfiguration(config.issuer, config.clientId, secret);
  } catch (err) {
    if (err instanceof IdpUnreachableError) {
      console.warn(`[baton] SSO: ${err.message}`);
      throw new SsoFailure("idp_unreachable", ssoMessage("idp_unreachable", { issuer: config.issuer }), config.teamId);
    }
    throw err;
  }
}

/** Starts a sign-in (or an admin's test sign-in): the IdP's authorization URL to redirect to. */
export async function startSsoSignIn(
  db: Db,
  input: {
    teamId: string;
    purpose: SsoPurpose;
    headers: Headers;
    userId?: string | null;
    loginHint?: string | null;
    nextPath?: string | null;
  },
): Promise<URL> {
  const config = await getSsoConfig(db, input.teamId);
  if (!config) throw new SsoFailure("sso_not_configured", ssoMessage("sso_not_configured"), input.teamId);
  const client = await configuredClient(db, config);
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const codeVerifier = oidc.randomPKCECodeVerifier();
  await createSsoTransaction(db, {
    state,
    teamId: input.teamId,
    purpose: input.purpose,
    nonce,
    codeVerifier,
    userId: input.userId ?? null,
    nextPath: input.nextPath ?? null,
  });
  const scopes = ["openid", "email", "profile"];
  const supported = client.serverMetadata().scopes_supported ?? [];
  if (config.groupClaim && supported.includes(config.groupClaim)) scopes.push(config.groupClaim);
  const params: Record<string, string> = {
    redirect_uri: redirectUri(input.headers),
    scope: scopes.join(" "),
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
  };
  if (input.loginHint) params.login_hint = input.loginHint;
  if (input.purpose === "test") params.prompt = "login";
  return oidc.buildAuthorizationUrl(client, params);
}

export interface SsoOutcome {
  purpose: SsoPurpose;
  teamId: string;
  nextPath: string | null;
  /** Sign-in: the new session's token and lifetime. */
  session?: { token: string; maxAgeSeconds: number; user: User };
}

function groupsOf(claims: Record<string, unknown>, claim: string | null): string[] | null {
  if (!claim) return null;
  const v = claims[claim];
  if (Array.isArray(v)) return v.filter((g): g is string => typeof g === "string");
  if (typeof v === "string") return [v];
  return null;
}

/** The role the groups give: the highest a group maps to, else the default role. */
export function roleFor(config: Pick<SsoConfig, "groupRoleMap" | "defaultRole">, groups: string[] | null): Role {
  let best: Role | null = null;
  for (const rule of config.groupRoleMap)
    if (groups?.includes(rule.group) && (best === null || roleRank[rule.role] > roleRank[best])) best = rule.role;
  return best ?? config.defaultRole;
}

/**
 * Finishes a sign-in at the callback. Throws SsoFailure (with the team when known) for every
 * refusal; the caller audits and redirects.
 */
export async function finishSsoSignIn(
  db: Db,
  input: { callbackUrl: string; headers: Headers; ip: string | null; userAgent: string | null; now?: number },
): Promise<SsoOutcome> {
  const now = input.now ?? Date.now();
  const current = new URL(input.callbackUrl);
  const state = current.searchParams.get("state");
  const tx = state ? await takeSsoTransaction(db, state, now) : null;
  if (!tx) throw new SsoFailure("invalid_state", ssoMessage("invalid_state"));
  const config = await getSsoConfig(db, tx.teamId);
  if (!config) throw new SsoFailure("sso_not_configured", ssoMessage("sso_not_configured"), tx.teamId);
  const fail = (code: SsoErrorCode, reason: string = code, detail?: string): never => {
    const failure = new SsoFailure(code, ssoMessage(code, { issuer: config.issuer, detail }), tx.teamId, reason);
    failure.purpose = tx.purpose;
    throw failure;
  };

  const idpError = current.searchParams.get("error");
  if (idpError) fail("idp_error", `idp_error:${idpError}`, current.searchParams.get("error_description") ?? idpError);

  let client: Awaited<ReturnType<typeof configuredClient>>;
  try {
    client = await configuredClient(db, config);
  } catch (err) {
    if (err instanceof SsoFailure) err.purpose = tx.purpose;
    throw err;
  }
  // The token request's redirect_uri is this URL without its query: Baton's registered one.
  const callback = new URL(redirectUri(input.headers));
  callback.search = current.search;
  let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
  try {
    tokens = await oidc.authorizationCodeGrant(client, callback, {
      pkceCodeVerifier: tx.codeVerifier,
      expectedState: state!,
      expectedNonce: tx.nonce,
      idTokenExpected: true,
    });
  } catch (err) {
    const e = err as Error & { code?: string; cause?: unknown };
    console.warn(`[baton] SSO: the token exchange with ${config.issuer} was refused: ${e.code ?? ""} ${e.message}`);
    if (e.code === "OAUTH_RESPONSE_BODY_ERROR" || e.name === "ResponseBodyError")
      fail("idp_error", "token_endpoint_error", e.message);
    if (e.name === "TypeError" || e.name === "AbortError" || e.name === "TimeoutError") fail("idp_unreachable");
    fail("token_rejected", `token_rejected:${e.message.slice(0, 200)}`);
  }
  const claims: Record<string, unknown> = { ...(tokens!.claims() ?? {}) };
  const issuer = client.serverMetadata().issuer;
  const subject = String(claims.sub);
  const needUserinfo =
    (typeof claims.email !== "string" || (config.groupClaim && claims[config.groupClaim] === undefined)) &&
    client.serverMetadata().userinfo_endpoint &&
    tokens!.access_token;
  if (needUserinfo) {
    try {
      const info = await oidc.fetchUserInfo(client, tokens!.access_token, subject);
      for (const [k, v] of Object.entries(info)) if (claims[k] === undefined) claims[k] = v;
    } catch (err) {
      console.warn(`[baton] SSO: userinfo from ${config.issuer} failed: ${(err as Error).message}`);
    }
  }

  const email = typeof claims.email === "string" ? claims.email.trim() : "";
  if (!email || !email.includes("@")) fail("email_missing");
  const verified = claims.email_verified === true || claims.email_verified === "true";
  const groups = groupsOf(claims, config.groupClaim);
  const role = roleFor(config, groups);

  if (tx.purpose === "test") {
    // A test reports what the IdP said and what would happen; it changes no account or membership.
    const problems: SsoErrorCode[] = [];
    if (!verified) problems.push("email_unverified");
    const domain = await findSsoDomain(db, emailDomain(email));
    if (!domain || domain.teamId !== tx.teamId) problems.push("domain_not_allowed");
    // The round trip is worth testing before the approval; real sign-ins wait for it.
    else if (domain.approvedAt === null) problems.push("sso_domain_unapproved");
    if (config.allowedGroups.length && groups === null) problems.push("missing_group_claim");
    else if (config.allowedGroups.length && !groups!.some((g) => config.allowedGroups.includes(g)))
      problems.push("group_not_allowed");
    const first = problems[0];
    await recordSsoTest(db, tx.teamId, {
      ok: true,
      at: now,
      email,
      subject,
      groups,
      role,
      ...(first ? { code: first, detail: ssoMessage(first, { issuer: config.issuer }) } : {}),
    });
    await recordAudit(db, {
      action: "sso.test",
      teamId: tx.teamId,
      userId: tx.userId,
      ip: input.ip,
      data: { issuer, subject, email, groups, role, warning: first ?? null },
      now,
    });
    return { purpose: "test", teamId: tx.teamId, nextPath: "/settings/sso?test=done" };
  }

  if (!verified) fail("email_unverified");
  const domain = await findSsoDomain(db, emailDomain(email));
  if (!domain || domain.teamId !== tx.teamId) fail("domain_not_allowed");
  // Before anything is created, linked or granted: an unapproved claim on a domain proves nothing.
  if (domain!.approvedAt === null) fail("sso_domain_unapproved", `sso_domain_unapproved:${domain!.domain}`);

  // Who this is: the IdP's (issuer, subject), never the email alone; else the existing account with
  // that email (the instance owner vouched for this team's domain, above), else nobody yet.
  const identity = await findSsoIdentity(db, issuer, subject);
  let user: User | null = identity ? await findUserById(db, identity.userId) : null;
  user ??= await findUserByEmail(db, normalizeEmail(email));
  if (user && user.disabledAt !== null) fail("account_disabled");

  // The gate comes before anything is created or linked: a refused person leaves no account behind.
  const membership = user ? await getMembership(db, tx.teamId, user.id) : null;
  const gate = config.allowedGroups.length > 0;
  const gateFailure: SsoErrorCode | null = !gate
    ? null
    : groups === null
      ? "missing_group_claim"
      : groups.some((g) => config.allowedGroups.includes(g))
        ? null
        : "group_not_allowed";
  if (gateFailure) {
    if (user && membership && membership.role !== "owner") {
      // Through access.ts like a removal on /team: the engine tokens and API tokens go with the membership.
      await removeTeamMember({ teamId: tx.teamId, userId: user.id }, { db });
      await recordAudit(db, {
        action: "member.remove",
        teamId: tx.teamId,
        target: user.id,
        data: { by: "sso", reason: gateFailure, before: { role: membership.role }, after: null },
        ip: input.ip,
        now,
      });
    }
    fail(gateFailure);
  }

  let jit = false;
  if (!user) {
    const name = typeof claims.name === "string" ? claims.name.slice(0, 100) : "";
    user = await createUser(db, { email, name, passwordHash: null, now });
    jit = true;
  }
  if (!identity) await linkSsoIdentity(db, { issuer, subject, userId: user.id, teamId: tx.teamId, email, now });

  let finalRole: Role;
  if (!membership) {
    await addMember(db, { teamId: tx.teamId, userId: user.id, role, now });
    finalRole = role;
    jit = true;
  } else if (config.groupSync && membership.role !== "owner" && membership.role !== role) {
    // Through access.ts like a role change on /team: engine tokens rescoped, API tokens beyond the role revoked.
    await changeMemberRole({ teamId: tx.teamId, userId: user.id, role }, { db });
    await recordAudit(db, {
      action: "member.role_change",
      teamId: tx.teamId,
      target: user.id,
      data: { by: "sso_group_sync", before: { role: membership.role }, after: { role }, groups },
      ip: input.ip,
      now,
    });
    finalRole = role;
  } else {
    finalRole = membership.role;
  }

  // A successful sign-in: what re-activates the person's API tokens of this team (bearer.ts).
  if (identity) await touchSsoIdentity(db, identity.id, email, now);
  const ttlMs = Math.min(SESSION_TTL_MS, config.sessionMaxHours * 3_600_000);
  const { token } = await createSession(db, { userId: user.id, ttlMs, ip: input.ip, userAgent: input.userAgent, now });
  await recordAudit(db, {
    action: "sso.sign_in",
    teamId: tx.teamId,
    userId: user.id,
    ip: input.ip,
    data: { issuer, subject, email, role: finalRole, groups, jit, session_max_hours: config.sessionMaxHours },
    now,
  });
  return {
    purpose: "sign_in",
    teamId: tx.teamId,
    nextPath: tx.nextPath,
    session: { token, maxAgeSeconds: Math.floor(ttlMs / 1000), user },
  };
}

/** Records a refused SSO sign-in (and a failed test's result). */
export async function recordSsoFailure(db: Db, failure: SsoFailure, input: { ip: string | null }): Promise<void> {
  try {
    if (failure.purpose === "test" && failure.teamId)
      await recordSsoTest(db, failure.teamId, {
        ok: false,
        at: Date.now(),
        code: failure.code,
        detail: failure.detail,
      });
    await recordAudit(db, {
      action: "sso.sign_in_failed",
      teamId: failure.teamId,
      ip: input.ip,
      data: { reason: failure.reason, code: failure.code },
    });
  } catch (err) {
    console.error("[baton] could not record an audit event:", err);
  }
}

export { getTeam };
