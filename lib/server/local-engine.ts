import "server-only";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { path as apiPath } from "../orkestr/path";
import { getEnv } from "./env";
import type { EngineScope } from "./rbac";
import { UserFacingError } from "./user-error";

// The embedded default: Baton's own engine on this machine (engine/), reached over loopback. The
// console proves it shares the engine's data dir by reading its bootstrap secret, and uses that
// secret to mint an orkestr token in one click ("Use the local engine", issue 4 item 4).

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * The local engine's origin: ORKESTR_API_URL's when it points at loopback (the embedded default,
 * `http://127.0.0.1:8787`), else `http://127.0.0.1:${ORKESTR_ENGINE_PORT}`.
 */
export function localEngineOrigin(): string {
  const env = getEnv();
  try {
    const api = new URL(env.ORKESTR_API_URL);
    if (isLoopbackHost(api.hostname)) return api.origin;
  } catch {
    /* getEnv() validated it; fall through to the engine port */
  }
  return `http://127.0.0.1:${env.ORKESTR_ENGINE_PORT}`;
}

/**
 * Every origin that counts as the configured local engine (exempt from the SSRF address checks):
 * ORKESTR_API_URL's origin when it is loopback, and `http://127.0.0.1:${ORKESTR_ENGINE_PORT}`.
 */
export function localEngineOrigins(): string[] {
  const env = getEnv();
  const out = new Set<string>();
  try {
    const api = new URL(env.ORKESTR_API_URL);
    if (isLoopbackHost(api.hostname)) out.add(api.origin);
  } catch {
    /* validated by getEnv() */
  }
  out.add(`http://127.0.0.1:${env.ORKESTR_ENGINE_PORT}`);
  return [...out];
}

/** Where the engine keeps its bootstrap secret: `${BATON_DATA_DIR}/engine/bootstrap.secret`. */
export function bootstrapSecretPath(): string {
  return path.join(getEnv().BATON_DATA_DIR, "engine", "bootstrap.secret");
}

export type LocalEngineErrorCode =
  "local_engine_secret_missing" | "local_engine_unreachable" | "local_engine_refused" | "local_engine_bad_response";

/** Minting a local engine token failed; `detail` says why and what to do. Status 503 (a server-side setup problem). */
export class LocalEngineError extends UserFacingError<LocalEngineErrorCode> {
  override name = "LocalEngineError";
  readonly status = 503;
}

function readBootstrapSecret(): string {
  const file = bootstrapSecretPath();
  const dir = path.dirname(file);
  const missing = (cause?: unknown) =>
    new LocalEngineError(
      "local_engine_secret_missing",
      `The local engine's bootstrap secret was not found in ${dir}; is the engine running with the same BATON_DATA_DIR?`,
      { cause },
    );
  let secret: string;
  try {
    secret = fs.readFileSync(file, "utf8").trim();
  } catch (err) {
    throw missing(err);
  }
  if (!secret) throw missing();
  return secret;
}

export interface LocalEngineStatus {
  available: boolean;
  origin: string;
  /** Why it is not available (for the Settings page), absent when it is. */
  reason?: string;
}

/**
 * Whether "Use the local engine" can work: the bootstrap secret exists in this data dir and
 * `GET {origin}/healthz` answers 200 within `timeoutMs` (default 1 s). Never throws.
 */
export async function localEngineStatus(opts: { timeoutMs?: number } = {}): Promise<LocalEngineStatus> {
  const origin = localEngineOrigin();
  const timeoutMs = opts.timeoutMs ?? 1_000;
  if (!fs.existsSync(bootstrapSecretPath())) {
    return {
      available: false,
      origin,
      reason: `The local engine's bootstrap secret was not found in ${path.dirname(bootstrapSecretPath())}; is the engine running with the same BATON_DATA_DIR?`,
    };
  }
  try {
    const res = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
    await res.body?.cancel().catch(() => undefined);
    if (res.status !== 200)
      return {
        available: false,
        origin,
        reason: `The local engine at ${origin} answered /healthz with ${res.status}.`,
      };
    return { available: true, origin };
  } catch (err) {
    const name = (err as Error).name;
    const reason =
      name === "TimeoutError" || name === "AbortError"
        ? `The local engine at ${origin} did not answer within ${timeoutMs} ms.`
        : `The local engine at ${origin} is not running (${causeCode(err) ?? "connection failed"}). Start it with: npm run engine`;
    return { available: false, origin, reason };
  }
}

/** isLocalEngineAvailable(): localEngineStatus().available. */
export async function isLocalEngineAvailable(opts: { timeoutMs?: number } = {}): Promise<boolean> {
  return (await localEngineStatus(opts)).available;
}

function causeCode(err: unknown): string | undefined {
  let c: unknown = err;
  for (let i = 0; i < 4 && c && typeof c === "object"; i++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === "string") return code;
    c = (c as { cause?: unknown }).cause;
  }
  return undefined;
}

const MintResponse = z.object({
  token: z.string().regex(/^ork_[A-Za-z0-9_-]{8,}$/),
  id: z.string().min(1).max(64),
  scopes: z.array(z.string()),
  hint: z.string().optional(),
});

/** Every scope: the token of a user's own account (no team), and of the roles that may change things. */
export const LOCAL_ENGINE_SCOPES: readonly EngineScope[] = ["sandboxes:read", "sandboxes:write"];

/**
 * The engine account a Baton team's sandboxes live in (the orkestr model: a team's members share
 * its sandboxes, each with a token of their own). A user without a team gets an account alone.
 */
export function engineAccountFor(teamId: string | null, userId: string): string {
  return (teamId ? teamId : userId).toLowerCase();
}

/**
 * Mints a token of `account` on the local engine (`POST {origin}/_admin/tokens` with the bootstrap
 * secret) with `scopes` (default: read and write) and returns it with its engine id (to revoke it
 * later). The token is shown nowhere: save it at once (connectLocalEngine() in tokens.ts does
 * both). Throws LocalEngineError.
 */
export async function mintLocalEngineToken(
  input: { account: string; label: string; scopes?: readonly EngineScope[] },
  opts: { timeoutMs?: number } = {},
): Promise<{ token: string; id: string }> {
  const secret = readBootstrapSecret();
  const origin = localEngineOrigin();
  const timeoutMs = opts.timeoutMs ?? 5_000;
  let res: Response;
  try {
    res = await fetch(`${origin}/_admin/tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-baton-bootstrap": secret },
      body: JSON.stringify({
        scopes: input.scopes ?? LOCAL_ENGINE_SCOPES,
        account: input.account,
        label: input.label.slice(0, 200),
      }),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: "manual",
    });
  } catch (err) {
    const name = (err as Error).name;
    const why =
      name === "TimeoutError" || name === "AbortError"
        ? `did not answer within ${Math.round(timeoutMs / 1000)} s`
        : `is not running (${causeCode(err) ?? "connection failed"}). Start it with: npm run engine`;
    throw new LocalEngineError("local_engine_unreachable", `The local engine at ${origin} ${why}.`, { cause: err });
  }
  const text = await res.text().catch(() => "");
  if (res.status === 401 || res.status === 403) {
    throw new LocalEngineError(
      "local_engine_refused",
      `The local engine at ${origin} refused the bootstrap secret from ${path.dirname(bootstrapSecretPath())} (${res.status}): ` +
        "it belongs to another engine. Is the engine running with the same BATON_DATA_DIR?",
    );
  }
  if (res.status !== 201) {
    throw new LocalEngineError(
      "local_engine_bad_response",
      `The local engine at ${origin} could not mint a token (it answered ${res.status}).`,
    );
  }
  let parsed: z.infer<typeof MintResponse>;
  try {
    parsed = MintResponse.parse(JSON.parse(text));
  } catch {
    // Neither the body nor the parse error (which quotes the body) is kept: it may hold a token.
    throw new LocalEngineError(
      "local_engine_bad_response",
      `The local engine at ${origin} answered the token request with something Baton could not read.`,
    );
  }
  return { token: parsed.token, id: parsed.id };
}

/**
 * Revokes a token on the local engine (`DELETE {origin}/_admin/tokens/{id}`): the engine refuses
 * it from the next request on. A token the engine no longer knows counts as revoked. Throws
 * LocalEngineError when the engine cannot be reached or refuses the bootstrap secret.
 */
export async function revokeLocalEngineToken(id: string, opts: { timeoutMs?: number } = {}): Promise<void> {
  const secret = readBootstrapSecret();
  const origin = localEngineOrigin();
  const timeoutMs = opts.timeoutMs ?? 5_000;
  let res: Response;
  try {
    res = await fetch(origin + apiPath`/_admin/tokens/${id}`, {
      method: "DELETE",
      headers: { "x-baton-bootstrap": secret },
      signal: AbortSignal.timeout(timeoutMs),
      redirect: "manual",
    });
  } catch (err) {
    throw new LocalEngineError(
      "local_engine_unreachable",
      `The local engine at ${origin} could not be reached to revoke token ${id} (${causeCode(err) ?? "connection failed"}).`,
      { cause: err },
    );
  }
  await res.body?.cancel().catch(() => undefined);
  if (res.status === 204 || res.status === 404) return;
  if (res.status === 401 || res.status === 403)
    throw new LocalEngineError(
      "local_engine_refused",
      `The local engine at ${origin} refused the bootstrap secret while revoking token ${id} (${res.status}).`,
    );
  throw new LocalEngineError(
    "local_engine_bad_response",
    `The local engine at ${origin} could not revoke token ${id} (it answered ${res.status}).`,
  );
}
