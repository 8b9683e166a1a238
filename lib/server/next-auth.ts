import "server-only";
import type { NextApiRequest, NextApiResponse } from "next";
import NextAuth, { type AuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { LoginBody } from "../validations/auth";
import { resolveSession, signOut } from "./auth";
import { getMigratedDb } from "./db/index";
import { clientIp, isSecureRequest, userAgent } from "./request-info";
import { deviceCookie, readDeviceToken } from "./device-trust";
import { authSecret, SECURE_SESSION_COOKIE, SESSION_COOKIE, SESSION_MAX_AGE_S } from "./session-cookie";
import { signInWithPassword, type SignInOutcome } from "./sign-in";

// next-auth v4, set up per request ("advanced initialization"): app/api/auth/[...nextauth]/route.ts
// and /api/auth/login call buildAuthOptions() for every request, so providers can come from the
// database at request time (per-team OIDC, below) without a restart.
//
// Sessions use next-auth's JWT strategy, but the JWT holds only `sid`: the session token of a row in
// our `sessions` table, created at sign-in. Every check (lib/server/auth.ts) goes to that row, so a
// sign-out revokes server-side and takes effect at once, on every device.

/** What one credentials sign-in attempt came to, for the route that started it. */
export interface SignInAttempt {
  /** In: the device cookie the browser sent (lib/server/device-trust.ts). */
  deviceToken?: string | null;
  outcome?: SignInOutcome;
  error?: unknown;
}

/** Thrown by the session callback for a JWT whose session row is no longer live: next-auth then deletes the cookie. */
class SessionEndedError extends Error {
  override name = "SessionEndedError";
  constructor() {
    super("the session was signed out or has expired");
  }
}

function credentialsProvider(attempt: SignInAttempt | undefined) {
  return CredentialsProvider({
    id: "credentials",
    name: "Email and password",
    credentials: {
      email: { label: "Email", type: "email" },
      password: { label: "Password", type: "password" },
    },
    async authorize(credentials, req) {
      try {
        const input = LoginBody.safeParse({ email: credentials?.email, password: credentials?.password });
        if (!input.success) {
          if (attempt) attempt.outcome = { ok: false, reason: "invalid_credentials" };
          return null;
        }
        const headers = (req?.headers ?? {}) as Record<string, string | string[] | undefined>;
        const outcome = await signInWithPassword(await getMigratedDb(), {
          email: input.data.email,
          password: input.data.password,
          ip: clientIp(headers),
          userAgent: userAgent(headers),
          deviceToken: attempt?.deviceToken ?? null,
        });
        if (attempt) attempt.outcome = outcome;
        if (!outcome.ok) return null;
        // next-auth puts this into the jwt callback, which keeps only `sid`.
        const user = { id: outcome.user.id, sid: outcome.token };
        return user;
      } catch (err) {
        if (attempt) attempt.error = err;
        throw err;
      }
    },
  });
}

/**
 * The request's next-auth options. `secure`: HTTPS cookie names and flags. `attempt`: where a
 * credentials sign-in reports its outcome (rate limited, wrong password…) to /api/auth/login.
 */
export async function buildAuthOptions(opts: { secure: boolean; attempt?: SignInAttempt }): Promise<AuthOptions> {
  const providers: AuthOptions["providers"] = [credentialsProvider(opts.attempt)];
  // Per-team OIDC plugs in here: load the teams' identity providers from the database (e.g. a
  // `team_oidc_providers` table with issuer, client id and an encrypted client secret) and push one
  // `{ id: "oidc-<team slug>", type: "oauth", wellKnown, clientId, clientSecret, … }` per team. The
  // jwt callback below then creates our `sessions` row for them, exactly as authorize() does here.
  return {
    secret: authSecret(),
    providers,
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_S },
    jwt: { maxAge: SESSION_MAX_AGE_S },
    useSecureCookies: opts.secure,
    pages: { signIn: "/login", error: "/login" },
    callbacks: {
      jwt({ token, user, trigger }) {
        if (trigger === "signIn" || trigger === "signUp") {
          const sid = (user as { sid?: unknown } | undefined)?.sid;
          // Only the session id: no name, email or picture in the cookie.
          return typeof sid === "string" ? { sid } : {};
        }
        return token;
      },
      async session({ token }) {
        // next-auth's own GET /api/auth/session: the same row check as every other one, and no `sid`
        // in the answer (it is the cookie's secret).
        const sid = typeof token.sid === "string" ? token.sid : null;
        const current = sid ? await resolveSession(await getMigratedDb(), sid) : null;
        if (!current) throw new SessionEndedError();
        return {
          expires: current.session.expiresAt.toISOString(),
          user: { name: current.user.name, email: current.user.email },
        };
      },
    },
    events: {
      // next-auth's own POST /api/auth/signout: revoke the row too, not just the cookie.
      async signOut({ token }) {
        const sid = typeof token?.sid === "string" ? token.sid : null;
        const current = sid ? await resolveSession(await getMigratedDb(), sid) : null;
        if (current) await signOut(current, { ip: null });
      },
    },
    logger: {
      error(code, metadata) {
        if (metadata instanceof SessionEndedError) return; // an ended session is not an error
        console.error(`[next-auth] ${code}`, metadata);
      },
      warn(code) {
        // Baton does not need NEXTAUTH_URL for email + password (it answers relative to the request);
        // OIDC providers will (absolute callback URLs).
        if (code === "NEXTAUTH_URL") return;
        console.warn(`[next-auth] warning ${code}`);
      },
      debug() {},
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Credentials sign-in from Baton's own JSON endpoint, through next-auth's handler.

/** The minimal Node-style response next-auth's (pages) API handler writes to. */
class CapturedResponse {
  statusCode = 200;
  body: unknown = undefined;
  private readonly headers = new Map<string, number | string | string[]>();
  status(code: number) {
    this.statusCode = code;
    return this;
  }
  getHeader(name: string) {
    return this.headers.get(name.toLowerCase());
  }
  setHeader(name: string, value: number | string | string[]) {
    this.headers.set(name.toLowerCase(), value);
    return this;
  }
  json(body: unknown) {
    this.body = body;
    return this;
  }
  send(body: unknown) {
    this.body = body;
    return this;
  }
  end() {
    return this;
  }
  setCookies(): string[] {
    const value = this.headers.get("set-cookie");
    return value === undefined ? [] : Array.isArray(value) ? value : [String(value)];
  }
}

async function callNextAuth(
  options: AuthOptions,
  input: {
    route: string[];
    method: "GET" | "POST";
    headers: Record<string, string>;
    cookies: Record<string, string>;
    body?: Record<string, string>;
  },
): Promise<CapturedResponse> {
  const res = new CapturedResponse();
  const req = {
    query: { nextauth: input.route },
    method: input.method,
    headers: input.headers,
    cookies: input.cookies,
    body: input.body,
  };
  await NextAuth(req as unknown as NextApiRequest, res as unknown as NextApiResponse, options);
  return res;
}

/** "name=value; Path=/; …" → [name, decoded value]. */
function cookiePair(setCookie: string): [string, string] {
  const first = setCookie.split(";", 1)[0] ?? "";
  const eq = first.indexOf("=");
  const name = first.slice(0, eq).trim();
  let value = first.slice(eq + 1).trim();
  try {
    value = decodeURIComponent(value);
  } catch {
    // as sent
  }
  return [name, value];
}

const isSessionCookie = (setCookie: string) => {
  const [name] = cookiePair(setCookie);
  return [SESSION_COOKIE, SECURE_SESSION_COOKIE].some((base) => name === base || name.startsWith(`${base}.`));
};

/**
 * Signs in with email and password through next-auth's Credentials provider, in process: next-auth
 * issues its CSRF token, runs authorize() (lib/server/sign-in.ts: rate limits, password check,
 * session row, audit) and the jwt callback, and encodes the session cookie. Returns the outcome and
 * the `Set-Cookie` values for the caller's response: the session cookie and, after a success, the
 * device cookie (lib/server/device-trust.ts), read back from this request on the next attempt. The
 * password travels only in this request's JSON body: never in a URL, never to the browser's JavaScript.
 */
export async function signInThroughNextAuth(
  req: Request,
  credentials: { email: string; password: string },
): Promise<{ outcome: SignInOutcome; setCookies: string[] }> {
  const secure = isSecureRequest(req);
  const attempt: SignInAttempt = { deviceToken: readDeviceToken(req.headers.get("cookie")) };
  const options = await buildAuthOptions({ secure, attempt });
  const headers = Object.fromEntries([...req.headers].filter(([name]) => name !== "cookie"));

  const csrf = await callNextAuth(options, { route: ["csrf"], method: "GET", headers, cookies: {} });
  const csrfToken = (csrf.body as { csrfToken?: unknown } | undefined)?.csrfToken;
  const csrfCookie = csrf
    .setCookies()
    .map(cookiePair)
    .find(([name]) => name.endsWith("next-auth.csrf-token"));
  if (typeof csrfToken !== "string" || !csrfCookie) throw new Error("next-auth did not issue a CSRF token");

  const callback = await callNextAuth(options, {
    route: ["callback", "credentials"],
    method: "POST",
    headers,
    cookies: { [csrfCookie[0]]: csrfCookie[1] },
    body: { csrfToken, email: credentials.email, password: credentials.password, json: "true" },
  });
  if (attempt.error !== undefined) throw attempt.error;
  if (!attempt.outcome)
    throw new Error(
      `next-auth answered the credentials sign-in with ${callback.statusCode} without running authorize()`,
    );
  const setCookies = callback.setCookies().filter(isSessionCookie);
  if (attempt.outcome.ok && setCookies.length === 0)
    throw new Error("next-auth signed the user in but set no session cookie");
  return {
    outcome: attempt.outcome,
    setCookies: attempt.outcome.ok ? [...setCookies, deviceCookie(attempt.outcome.deviceToken, secure)] : [],
  };
}
