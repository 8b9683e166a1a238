import { createPrivateKey, generateKeyPairSync, randomUUID, sign, type JsonWebKey } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type Configuration, type KoaContextWithOIDC } from "oidc-provider";

// A real OpenID provider for the SSO tests: oidc-provider 8 on 127.0.0.1:<free port>, with its own
// clients and users (email, email_verified, name, groups). Its development login form signs in
// any known user id (any password); consent is granted up front. The test can make it misbehave:
// `tamper` rewrites the ID token's claims in the token response and signs it again with the
// provider's own key (a wrong audience, an expired token, another nonce), so openid-client sees a
// validly signed token that must still be refused.

export interface IdpUser {
  email: string;
  email_verified?: boolean;
  name?: string;
  /** Left out: no group claim at all. */
  groups?: string[];
}

export interface IdpClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface TestIdp {
  issuer: string;
  users: Map<string, IdpUser>;
  /** Rewrites the next ID tokens' claims (null: leave them alone). */
  tamper: ((claims: Record<string, unknown>) => Record<string, unknown>) | null;
  provider: Provider;
  close(): Promise<void>;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url");

export async function startTestIdp(opts: {
  clients: IdpClient[];
  users?: Record<string, IdpUser>;
  /** A port chosen beforehand (e2e: Baton's BATON_SSO_ALLOWED_ISSUERS names it before it starts); default a free one. */
  port?: number;
}): Promise<TestIdp> {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = randomUUID();
  const jwk = { ...(privateKey.export({ format: "jwk" }) as JsonWebKey), kid, alg: "RS256", use: "sig" };
  const signingKey = createPrivateKey({ key: jwk as JsonWebKey, format: "jwk" });
  const users = new Map(Object.entries(opts.users ?? {}));

  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const configuration: Configuration = {
    clients: opts.clients.map((c) => ({
      ...c,
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_post",
    })),
    jwks: { keys: [jwk as never] },
    cookies: { keys: ["test-idp-cookie-key"] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "groups"] },
    scopes: ["openid", "email", "profile", "offline_access"],
    conformIdTokenClaims: false,
    ttl: { Interaction: 600, Grant: 3600, Session: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, id) {
      const user = users.get(id);
      if (!user) return undefined;
      return {
        accountId: id,
        async claims() {
          const u = users.get(id)!;
          return { sub: id, ...u };
        },
      };
    },
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId!,
      });
      grant.addOIDCScope("openid email profile");
      grant.addOIDCClaims(["email", "email_verified", "name", "groups"]);
      await grant.save();
      return grant;
    },
  };
  const provider = new Provider(issuer, configuration);

  const idp: TestIdp = {
    issuer,
    users,
    tamper: null,
    provider,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (ctx.path === "/token" && idp.tamper && body && typeof body.id_token === "string") {
      const [h, p] = body.id_token.split(".");
      const header = JSON.parse(Buffer.from(h!, "base64url").toString());
      const claims = idp.tamper(JSON.parse(Buffer.from(p!, "base64url").toString()));
      const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
      const sig = sign("RSA-SHA256", Buffer.from(input), signingKey);
      ctx.body = { ...body, id_token: `${input}.${b64url(sig)}` };
    }
  });
  server.on("request", provider.callback());
  return idp;
}

/** A minimal cookie jar for driving the IdP's pages without a browser. */
class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";", 1);
      const eq = pair!.indexOf("=");
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
  }
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

/**
 * Signs `userId` in at the IdP as a browser would (the login form, any password), from the
 * authorization URL Baton redirected to, and returns the URL the IdP sends the browser back to
 * (Baton's callback with code, state and iss).
 */
export async function signInAtIdp(authorizationUrl: string, userId: string, redirectUri: string): Promise<string> {
  const jar = new Jar();
  let url = authorizationUrl;
  let method = "GET";
  let body: string | undefined;
  for (let hop = 0; hop < 12; hop++) {
    if (url.startsWith(redirectUri)) return url;
    const res = await fetch(url, {
      method,
      redirect: "manual",
      headers: { cookie: jar.header(), ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
      body,
    });
    jar.take(res);
    method = "GET";
    body = undefined;
    const location = res.headers.get("location");
    if (location) {
      url = new URL(location, url).href;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (res.status !== 200 || !action)
      throw new Error(`the IdP answered ${res.status} at ${url}: ${html.slice(0, 300)}`);
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1] ?? "login";
    url = new URL(action.replace(/&amp;/g, "&"), url).href;
    method = "POST";
    body = new URLSearchParams(prompt === "login" ? { prompt, login: userId, password: "any" } : { prompt }).toString();
  }
  throw new Error("too many redirects at the IdP");
}
