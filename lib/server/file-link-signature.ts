import "server-only";
import { createHmac, hkdfSync } from "node:crypto";
import { getVaultKey, safeEqual } from "./crypto";

// Baton-signed file links (issue 23): what presign-download and presign-upload answer an API
// token's client (the orkestr SDK), which the SDK's README promises is "plain HTTP, no auth header
// ... reusable until expiry ... hand to a browser, curl, or another service". The link is Baton's
// own files/raw route on Baton's origin, never the upstream's URL (no engine host, no engine token):
//
//   /api/v1/sandboxes/{id}/files/raw?path=…&team=…&exp=<unix s>&tok=<api token id>[&max=<bytes>]&sig=<hex>
//
// `sig` is HMAC-SHA256 under a key derived (HKDF, its own label) from Baton's vault key, over the
// method, the team, the sandbox, the path, the expiry, the issuing API token and, for a PUT, its
// max_bytes: change any of them and the link is refused (403 invalid_signature). It is stateless,
// so the link stays only as good as the token behind it: the raw route also checks, on every use,
// that the token is still live and still allowed (lib/server/api-tokens/signed-link.ts).

/** The longest a link lives, whatever was asked: it is a bearer capability, so kept short. */
export const FILE_LINK_MAX_SECONDS = 3600;
/** The contract's (and the engine's) default when no expires_in_seconds is given. */
export const FILE_LINK_DEFAULT_SECONDS = 300;

const HKDF_LABEL = "baton/file-link/v1";

export type FileLinkMethod = "GET" | "PUT";

/** What a link allows, all of it covered by the signature. */
export interface FileLinkClaims {
  method: FileLinkMethod;
  /** The team's slug, as the URL's `team` carries it. */
  team: string;
  sandboxId: string;
  path: string;
  /** Unix seconds after which the link is refused (410 url_expired). */
  exp: number;
  /** The API token that issued it, whose validity the link keeps depending on. */
  tokenId: string;
  /** A PUT's largest accepted body, when the issuer set one. */
  maxBytes?: number | null;
}

let keyCache: { vault: Buffer; key: Buffer } | undefined;
function linkKey(): Buffer {
  const vault = getVaultKey();
  if (keyCache?.vault !== vault)
    keyCache = { vault, key: Buffer.from(hkdfSync("sha256", vault, "baton", HKDF_LABEL, 32)) };
  return keyCache.key;
}

/**
 * The signature of `claims`. Fields are newline-separated and none may hold a newline (checked), so
 * two different claim sets never produce the same text.
 */
export function signFileLink(claims: FileLinkClaims, key: Buffer = linkKey()): string {
  const fields = [
    "file-link:v1",
    claims.method,
    claims.team,
    claims.sandboxId,
    claims.path,
    String(claims.exp),
    claims.tokenId,
    claims.method === "PUT" && claims.maxBytes != null ? String(claims.maxBytes) : "",
  ];
  if (fields.some((f) => /[\r\n]/.test(f))) throw new Error("signFileLink(): a claim holds a line break");
  return createHmac("sha256", key).update(fields.join("\n")).digest("hex");
}

/** The expiry (unix seconds) of a link asked to live `requestedSeconds`: capped at FILE_LINK_MAX_SECONDS. */
export function fileLinkExpiry(requestedSeconds: number | undefined, nowMs = Date.now()): number {
  const seconds = Math.min(requestedSeconds ?? FILE_LINK_DEFAULT_SECONDS, FILE_LINK_MAX_SECONDS);
  return Math.floor(nowMs / 1000) + Math.max(1, seconds);
}

/** The query string of a signed link (without the leading `?`), in a fixed order. */
export function fileLinkQuery(claims: FileLinkClaims, key?: Buffer): string {
  const q = new URLSearchParams({ path: claims.path, team: claims.team, exp: String(claims.exp), tok: claims.tokenId });
  if (claims.method === "PUT" && claims.maxBytes != null) q.set("max", String(claims.maxBytes));
  q.set("sig", signFileLink(claims, key));
  return q.toString();
}

export type FileLinkCheck =
  { ok: true; claims: FileLinkClaims } | { ok: false; code: "invalid_signature" | "url_expired" };

const LINK_KEYS = new Set(["path", "team", "exp", "tok", "max", "sig"]);
const DIGITS = /^[1-9][0-9]{0,15}$/;
const HEX_SIG = /^[0-9a-f]{64}$/;

/**
 * Checks a signed link's query for a request of `method` on `sandboxId`: the signature first (in
 * constant time), then the expiry. A HEAD is a GET's; any other method needs a link signed for it,
 * so a download link never uploads. A repeated or unknown parameter is refused: the route must read
 * exactly what was signed.
 */
export function verifyFileLink(
  method: string,
  sandboxId: string,
  query: URLSearchParams,
  nowMs = Date.now(),
  key?: Buffer,
): FileLinkCheck {
  const invalid = { ok: false, code: "invalid_signature" } as const;
  const seen = new Set<string>();
  for (const k of query.keys()) {
    if (!LINK_KEYS.has(k) || seen.has(k)) return invalid;
    seen.add(k);
  }
  const get = (k: string) => query.get(k) ?? "";
  const verb = method === "HEAD" ? "GET" : method;
  if (verb !== "GET" && verb !== "PUT") return invalid;
  const [path, team, exp, tokenId, max, sig] = ["path", "team", "exp", "tok", "max", "sig"].map(get) as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (!path || !team || !tokenId || !sandboxId || !DIGITS.test(exp) || !HEX_SIG.test(sig)) return invalid;
  if (query.has("max") && (verb !== "PUT" || !DIGITS.test(max))) return invalid;
  let claims: FileLinkClaims;
  try {
    claims = { method: verb, team, sandboxId, path, exp: Number(exp), tokenId, maxBytes: max ? Number(max) : null };
    if (!safeEqual(sig, signFileLink(claims, key))) return invalid;
  } catch {
    return invalid; // a line break in a claim: never signed
  }
  if (claims.exp * 1000 <= nowMs) return { ok: false, code: "url_expired" };
  return { ok: true, claims };
}
