import "server-only";
import * as oidc from "openid-client";
import { createGuardedFetch } from "../ssrf";
import { createNodeFetch } from "../node-fetch";
import type { FetchLike } from "../../orkestr/core";

// The OpenID Connect client side of per-team SSO, on openid-client v6 (discovery, PKCE, the code
// exchange and the ID token's signature, issuer, audience, expiry and nonce checks are all its own).
//
// next-auth v4 (the console's session layer) builds its providers from options made per request,
// but its OAuth flow keeps one provider id per issuer, its state/PKCE/nonce in cookies it names by
// provider, and fixed callback URLs: a team's issuer, client and secret change at run time, and the
// sign-in must be tied to a team (JIT membership, group mapping, enforcement) before a session
// exists. So Baton drives openid-client directly and only reuses next-auth's session cookie format.
//
// Every request to the IdP (discovery, JWKS, token, userinfo) goes through Baton's SSRF guard
// (lib/server/ssrf.ts): public addresses only, re-checked at connect time. An issuer on a private
// network (a corporate Keycloak) is reachable only when the instance's operator lists its origin in
// BATON_SSO_ALLOWED_ISSUERS (comma-separated origins); those may also use plain http.

const TIMEOUT_S = 10;

/** The origins BATON_SSO_ALLOWED_ISSUERS lists. */
export function allowedIssuerOrigins(): Set<string> {
  const out = new Set<string>();
  for (const part of (process.env.BATON_SSO_ALLOWED_ISSUERS ?? "").split(",")) {
    const t = part.trim();
    if (!t) continue;
    try {
      out.add(new URL(t).origin);
    } catch {
      console.warn(`[baton] BATON_SSO_ALLOWED_ISSUERS: "${t}" is not a URL; ignored`);
    }
  }
  return out;
}

let guarded: FetchLike | undefined;
let plain: FetchLike | undefined;

/** A fetch for openid-client: the listed origins directly, everything else through the SSRF guard. */
function idpFetch(listed: Set<string>): oidc.CustomFetch {
  return (url, options) => {
    const origin = new URL(url).origin;
    const f = listed.has(origin) ? (plain ??= createNodeFetch()) : (guarded ??= createGuardedFetch());
    return f(url, options as RequestInit);
  };
}

/** Why an issuer URL is refused before any request, or null. */
export function issuerProblem(issuer: string): string | null {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return "The issuer must be a URL, e.g. https://login.example.com/realms/acme.";
  }
  if (url.username || url.password || url.search || url.hash)
    return "The issuer must not contain a user name, password, query or fragment.";
  const listed = allowedIssuerOrigins().has(url.origin);
  if (url.protocol !== "https:" && !(listed && url.protocol === "http:"))
    return "The issuer must use https:// (plain http only for an issuer the instance owner listed in BATON_SSO_ALLOWED_ISSUERS).";
  return null;
}

export class IdpUnreachableError extends Error {
  override name = "IdpUnreachableError";
}

/**
 * Discovers the issuer and returns openid-client's Configuration for this team's client. Throws
 * IdpUnreachableError when the IdP cannot be reached or answers discovery wrongly.
 */
export async function idpConfiguration(
  issuer: string,
  clientId: string,
  clientSecret: string | null,
): Promise<oidc.Configuration> {
  const listed = allowedIssuerOrigins();
  const url = new URL(issuer);
  const fetchFn = idpFetch(listed);
  const insecure = url.protocol === "http:" && listed.has(url.origin);
  try {
    const config = await oidc.discovery(
      url,
      clientId,
      clientSecret ?? undefined,
      clientSecret ? oidc.ClientSecretPost(clientSecret) : oidc.None(),
      {
        [oidc.customFetch]: fetchFn,
        timeout: TIMEOUT_S,
        ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
      },
    );
    config[oidc.customFetch] = fetchFn;
    config.timeout = TIMEOUT_S;
    return config;
  } catch (err) {
    throw new IdpUnreachableError(`discovery of ${issuer} failed: ${(err as Error).message}`, { cause: err });
  }
}

export { oidc };
