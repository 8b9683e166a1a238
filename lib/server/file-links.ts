import "server-only";
import { buildQuery, path } from "../orkestr/path";
import type { PresignedUrl } from "../orkestr/schemas/files";
import type { RouteContext } from "./route";
import { linkOrigin } from "./team-api";
import { fileLinkExpiry, fileLinkQuery, type FileLinkClaims, type FileLinkMethod } from "./file-link-signature";

// Presigned file URLs through the console. The upstream builds them on its own host
// (`https://api.orkestr.eu/v1/sandboxes/…/files/raw?path=&exp=&sig=`; for the local engine a
// loopback address such as http://127.0.0.1:8787). They carry no Bearer token, only an HMAC
// signature and an expiry, but Baton still does not hand them to the browser:
// - the signature is a bearer capability: anyone holding the URL reads (or overwrites) the file
//   until it expires, outside Baton's session, roles and audit log;
// - the local engine's URL names a loopback address the browser often cannot reach, and it would
//   show the engine's internal address;
// - Baton's CSP allows connections to its own origin only.
// So presign-download and presign-upload answer a link to Baton's own streaming route
// /api/v1/sandboxes/{id}/files/raw?path=, and the upstream presign call is still made: it validates
// the path and the sandbox's state, and its errors come back as usual. Which link depends on who asks:
// - the browser (session) gets a same-origin link that the session authorizes (sandboxes.read for
//   GET, sandboxes.write for PUT, same-origin check on PUT), with no expiry of its own
//   (`expires_at: null`): it works for as long as the user's session and role allow;
// - an API token's client (the orkestr SDK, whose README promises "plain HTTP, no auth header …
//   hand to a browser, curl, or another service") gets an absolute Baton-signed link
//   (file-link-signature.ts): a bearer capability after all, but Baton's: at most an hour, bound to
//   one method, team, sandbox and path (and a PUT's max_bytes), and only as good as the token that
//   made it, checked on every use (api-tokens/signed-link.ts), with the token named in the audit log.

/** The same-origin link to Baton's streaming files/raw route for a file. */
export function batonRawFileUrl(sandboxId: string, filePath: string, teamSlug?: string | null): string {
  // The team rides along (`team`): a download link or an upload with progress (XMLHttpRequest)
  // carries no X-Baton-Team header, and must act in the tab's team, not the default one.
  return path`/api/v1/sandboxes/${sandboxId}/files/raw` + buildQuery({ path: filePath, team: teamSlug ?? undefined });
}

/** The path the upstream signed (it normalises, e.g. `/workspace/./a` → `/workspace/a`), else the one asked for. */
function signedPath(upstreamUrl: string, requested: string): string {
  try {
    return new URL(upstreamUrl, "http://upstream.invalid").searchParams.get("path") || requested;
  } catch {
    return requested;
  }
}

/**
 * The upstream's presigned answer for the browser, its URL replaced by Baton's own route (no
 * signature, no upstream host), which the session authorizes.
 */
export function batonPresigned(
  sandboxId: string,
  requestedPath: string,
  upstream: PresignedUrl,
  teamSlug?: string | null,
): { url: string; method: string; headers: Record<string, string> | null; expires_at: null } {
  return {
    url: batonRawFileUrl(sandboxId, signedPath(upstream.url, requestedPath), teamSlug),
    method: upstream.method ?? "GET",
    headers: upstream.headers ?? null,
    expires_at: null,
  };
}

/**
 * The upstream's presigned answer for an API token's client: a Baton-signed link, absolute on
 * Baton's origin (the SDK resolves a URL against its own base, `…/api`), expiring at most
 * FILE_LINK_MAX_SECONDS from now whatever was asked (`expires_at` says when). No upstream host, no
 * engine or Baton token in it.
 */
export function signedPresigned(
  input: {
    method: FileLinkMethod;
    sandboxId: string;
    requestedPath: string;
    teamSlug: string;
    tokenId: string;
    origin: string;
    expiresInSeconds?: number;
    maxBytes?: number;
  },
  upstream: PresignedUrl,
  nowMs = Date.now(),
): { url: string; method: FileLinkMethod; headers: Record<string, string> | null; expires_at: string } {
  const claims: FileLinkClaims = {
    method: input.method,
    team: input.teamSlug,
    sandboxId: input.sandboxId,
    path: signedPath(upstream.url, input.requestedPath),
    exp: fileLinkExpiry(input.expiresInSeconds, nowMs),
    tokenId: input.tokenId,
    maxBytes: input.method === "PUT" ? (input.maxBytes ?? null) : null,
  };
  return {
    url: input.origin + path`/api/v1/sandboxes/${input.sandboxId}/files/raw` + "?" + fileLinkQuery(claims),
    method: input.method,
    headers: upstream.headers ?? null,
    expires_at: new Date(claims.exp * 1000).toISOString(),
  };
}

/**
 * What presign-download and presign-upload answer: a Baton-signed link when an API token's client
 * asks (the token and its team are in the link), else the session's same-origin link.
 */
export function presignedAnswer(
  asker: Pick<RouteContext<"user", undefined, undefined, undefined>, "req" | "current" | "team">,
  link: {
    method: FileLinkMethod;
    sandboxId: string;
    requestedPath: string;
    expiresInSeconds?: number;
    maxBytes?: number;
  },
  upstream: PresignedUrl,
) {
  const teamSlug = asker.team?.team.slug ?? null;
  if (asker.current.via.kind === "token" && teamSlug)
    return signedPresigned(
      { ...link, teamSlug, tokenId: asker.current.via.tokenId, origin: linkOrigin(asker.req) },
      upstream,
    );
  return batonPresigned(link.sandboxId, link.requestedPath, upstream, teamSlug);
}

/**
 * Headers for file bytes served from Baton's origin: a file from a sandbox is untrusted content,
 * so it is always a download, never rendered (an .html file would otherwise run as Baton's page).
 */
export const DOWNLOAD_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "application/octet-stream",
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; sandbox",
  "cache-control": "private, no-store",
};

/** The file name for Content-Disposition: the last path segment. */
export function downloadName(filePath: string): string {
  return filePath.split("/").filter(Boolean).pop() ?? "download";
}
