import "server-only";
import { createHmac } from "node:crypto";
import net from "node:net";
import { sql } from "kysely";
import { decrypt, encrypt, randomToken } from "../crypto";
import { AUDIT_COLUMNS, auditEventFromRow, onAuditRecorded } from "../db/audit";
import type { Db } from "../db/index";
import { acquireLease, processHolder } from "../db/leases";
import { AppError } from "../errors";
import {
  classifyDestination,
  createGuardedFetch,
  mayConnectTo,
  ownAddresses,
  systemResolver,
  type Resolver,
} from "../ssrf";
import { stripBrackets } from "../../net/address";
import { createNodeFetch } from "../node-fetch";
import type { FetchLike } from "../../orkestr/core";
import { DEFAULT_RETENTION_DAYS } from "./retention";
import { auditEventView } from "./query";

// A team's audit stream to its SIEM, and its settings. Each new row of a team whose stream is on is
// queued in audit_outbox (recordAudit, same moment) and POSTed by the process that holds the
// `audit-stream` lease, signed as orkestr signs its webhooks (lib/server/webhook-signature.ts):
// `X-Orkestr-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>`, `X-Orkestr-Event: audit.event`,
// `X-Orkestr-Delivery: dlv_…`, body `{"id","type":"audit.event","created_at","data":<the row>}`. A row
// is claimed (claimed_until) before it is sent, so two instances never send it both; a failure is
// retried with exponential backoff, and after MAX_ATTEMPTS the row is given up (kept, with the error).
//
// The URL is the owner's input, fetched by the server: it goes through the SSRF guard when saved
// (every address the name resolves to must be public) and again at connect time (the guarded
// fetch's lookup). An operator may allow internal receivers by origin in BATON_AUDIT_STREAM_ALLOW
// (as ORKESTR_ENGINE_WEBHOOK_ALLOW does for the engine's webhooks); tests allow their loopback one.

export const AUDIT_STREAM = {
  /** Attempts per row before it is given up. */
  maxAttempts: 8,
  /** Backoff: 2 s, 4 s, 8 s … capped at 10 minutes. */
  baseDelayMs: 2_000,
  maxDelayMs: 10 * 60_000,
  /** Each POST's timeout, and how long a claim lasts. */
  timeoutMs: 10_000,
  claimMs: 30_000,
  /** How often a process checks the outbox (new rows also nudge it at once). */
  pollMs: 5_000,
  batch: 50,
} as const;

const LEASE = "audit-stream";
export const RETENTION_LIMITS = { min: 1, max: 3650 } as const;

export const siemSecretAad = (teamId: string) => `audit_settings:${teamId}:siem_secret`;

/** Origins allowed to be internal (operator setting), e.g. "http://127.0.0.1:9000". */
export function streamAllowList(env: NodeJS.ProcessEnv = process.env): string[] {
  return originList(env.BATON_AUDIT_STREAM_ALLOW);
}

/** The origins of a comma- or space-separated list of URLs (an operator's allow list); the rest dropped. */
export function originList(value: string | undefined): string[] {
  return (value ?? "")
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((o) => {
      try {
        return new URL(o).origin;
      } catch {
        return "";
      }
    })
    .filter(Boolean);
}

function refuse(detail: string, field = "siem_url"): AppError {
  return new AppError("validation_error", detail, { errors: { [field]: detail } });
}

const refuseField = refuse;

export interface OutgoingUrlOptions {
  resolver?: Resolver;
  /** Origins the operator allowed to be internal (default: BATON_AUDIT_STREAM_ALLOW). */
  allow?: readonly string[];
  /** The body field the URL came in, for the 422's `errors` (default siem_url). */
  field?: string;
  /** What sends to it, for the refusal's words (default "The audit stream"). */
  sender?: string;
  /** An example of a full URL (default the SIEM's). */
  example?: string;
}

/**
 * Checks a URL Baton will POST to (the SIEM stream, spend-cap alerts) before it is saved and before
 * each send; returns it normalised.
 */
export async function assertSafeStreamUrl(raw: string, opts: OutgoingUrlOptions = {}): Promise<URL> {
  const field = opts.field ?? "siem_url";
  const refuse = (detail: string) => refuseField(detail, field);
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw refuse(`Enter the full URL, e.g. ${opts.example ?? "https://siem.example.com/ingest"}.`);
  }
  if (raw.length > 2048) throw refuse("The URL is too long (at most 2048 characters).");
  if (url.protocol !== "https:" && url.protocol !== "http:") throw refuse("The URL must start with https://.");
  if (url.username || url.password) throw refuse("Put no user name or password in the URL; the stream is signed.");
  const allow = opts.allow ?? streamAllowList();
  if (allow.includes(url.origin)) return url;
  if (url.protocol !== "https:")
    throw refuse("The URL must use https:// (plain http is only for receivers the operator allowed).");
  const host = stripBrackets(url.hostname);
  const own = ownAddresses();
  const addresses = net.isIP(host)
    ? [host]
    : await (opts.resolver ?? systemResolver)(host).then(
        (r) => r.map((a) => a.address),
        () => null,
      );
  if (!addresses || addresses.length === 0) throw refuse(`${url.hostname} does not resolve; check the host name.`);
  const bad = addresses.find((a) => !mayConnectTo(a, own));
  if (bad) {
    const cls = classifyDestination(bad, own);
    throw refuse(
      `${url.hostname}${bad === host ? " is" : ` resolves to ${bad},`} ${cls.label}. ${opts.sender ?? "The audit stream"} may only go to public addresses, so that it cannot reach services inside this network.`,
    );
  }
  return url;
}

// ---------------------------------------------------------------------------------------------
// Settings

export interface AuditSettings {
  retentionDays: number;
  siemUrl: string | null;
  siemEnabled: boolean;
  hasSecret: boolean;
  updatedAt: Date | null;
}

export async function getAuditSettings(db: Db, teamId: string): Promise<AuditSettings> {
  const row = await db.selectFrom("audit_settings").selectAll().where("team_id", "=", teamId).executeTakeFirst();
  if (!row)
    return {
      retentionDays: DEFAULT_RETENTION_DAYS,
      siemUrl: null,
      siemEnabled: false,
      hasSecret: false,
      updatedAt: null,
    };
  return {
    retentionDays: row.retention_days,
    siemUrl: row.siem_url,
    siemEnabled: row.siem_enabled === 1,
    hasSecret: row.siem_secret_ciphertext !== null,
    updatedAt: new Date(row.updated_at),
  };
}

export interface AuditSettingsChange {
  retentionDays?: number;
  siemUrl?: string | null;
  siemEnabled?: boolean;
  rotateSecret?: boolean;
}

/** Saves a change; returns the settings before and after, and the new secret when one was made (shown once). */
export async function updateAuditSettings(
  db: Db,
  teamId: string,
  change: AuditSettingsChange,
  opts: { now?: number; resolver?: Resolver } = {},
): Promise<{ before: AuditSettings; after: AuditSettings; secret: string | null }> {
  const now = opts.now ?? Date.now();
  const before = await getAuditSettings(db, teamId);
  let siemUrl = before.siemUrl;
  if (change.siemUrl !== undefined) {
    siemUrl =
      change.siemUrl === null || change.siemUrl.trim() === ""
        ? null
        : (await assertSafeStreamUrl(change.siemUrl, opts)).href;
  }
  const enabled = change.siemEnabled ?? before.siemEnabled;
  if (enabled && !siemUrl) throw refuse("Set the SIEM's URL before turning the stream on.");
  // A secret is made with the first URL, and anew on request or when the URL changes host.
  const urlChanged = siemUrl !== before.siemUrl;
  const needSecret = siemUrl !== null && (!before.hasSecret || change.rotateSecret === true || urlChanged);
  const secret = needSecret ? `whsec_${randomToken(24)}` : null;
  const values = {
    retention_days: change.retentionDays ?? before.retentionDays,
    siem_url: siemUrl,
    siem_enabled: enabled && siemUrl ? 1 : 0,
    updated_at: now,
    ...(secret ? { siem_secret_ciphertext: encrypt(secret, { aad: siemSecretAad(teamId) }) } : {}),
    ...(siemUrl === null ? { siem_secret_ciphertext: null } : {}),
  };
  await db
    .insertInto("audit_settings")
    .values({ team_id: teamId, siem_secret_ciphertext: null, ...values })
    .onConflict((oc) => oc.column("team_id").doUpdateSet(values))
    .execute();
  return { before, after: await getAuditSettings(db, teamId), secret };
}

export function auditSettingsView(s: AuditSettings) {
  return {
    retention_days: s.retentionDays,
    siem_url: s.siemUrl,
    siem_enabled: s.siemEnabled,
    siem_secret_set: s.hasSecret,
  };
}

// ---------------------------------------------------------------------------------------------
// Sending

/** The signature orkestr puts on a webhook body (lib/server/webhook-signature.ts checks it). */
export function signStreamBody(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", Buffer.from(secret, "utf8")).update(Buffer.from(body, "utf8")).digest("hex")}`;
}

export function backoffMs(attempts: number): number {
  return Math.min(AUDIT_STREAM.baseDelayMs * 2 ** Math.max(0, attempts - 1), AUDIT_STREAM.maxDelayMs);
}

export interface DrainOptions {
  now?: number;
  holder?: string;
  /** Replaces the fetch (never used to mock: tests pass undefined and POST to their own receiver). */
  resolver?: Resolver;
  fetch?: FetchLike;
  /** Skip the lease (a caller that already holds it). */
  leased?: boolean;
}

export interface DrainResult {
  sent: number;
  failed: number;
  gaveUp: number;
}

let guardedFetch: FetchLike | undefined;
let plainFetch: FetchLike | undefined;

/**
 * POSTs to a URL that passed assertSafeStreamUrl: through the SSRF-guarded fetch (the address is
 * checked again at connect time), or a plain one for an origin the operator allowed.
 */
export async function postOutgoing(
  url: URL,
  allow: readonly string[],
  init: RequestInit,
  opts: Pick<DrainOptions, "fetch" | "resolver">,
): Promise<Response> {
  return post(url, allow, init, opts);
}

async function post(
  url: URL,
  allow: readonly string[],
  init: RequestInit,
  opts: Pick<DrainOptions, "fetch" | "resolver">,
): Promise<Response> {
  const f =
    opts.fetch ??
    (allow.includes(url.origin)
      ? (plainFetch ??= createNodeFetch())
      : opts.resolver
        ? createGuardedFetch({ resolver: opts.resolver })
        : (guardedFetch ??= createGuardedFetch()));
  return f(url.href, { ...init, signal: AbortSignal.timeout(AUDIT_STREAM.timeoutMs) });
}

/**
 * Sends what is due in the outbox, once per row across processes: under the `audit-stream` lease,
 * and each row claimed by a conditional update before it is sent.
 */
export async function drainAuditOutbox(db: Db, opts: DrainOptions = {}): Promise<DrainResult | null> {
  const now = opts.now ?? Date.now();
  const holder = opts.holder ?? processHolder();
  if (!opts.leased) {
    const leased = await acquireLease(db, { name: LEASE, holder, now, ttlMs: AUDIT_STREAM.claimMs, renew: true });
    if (!leased) return null;
  }
  const result: DrainResult = { sent: 0, failed: 0, gaveUp: 0 };
  const due = await db
    .selectFrom("audit_outbox")
    .select(["event_id", "team_id", "attempts"])
    .where("gave_up_at", "is", null)
    .where("next_attempt_at", "<=", now)
    .where((eb) => eb.or([eb("claimed_until", "is", null), eb("claimed_until", "<=", now)]))
    .orderBy("next_attempt_at")
    .orderBy("event_id")
    .limit(AUDIT_STREAM.batch)
    .execute();
  const allow = streamAllowList();
  for (const item of due) {
    const claimed = await db
      .updateTable("audit_outbox")
      .set({ claimed_until: now + AUDIT_STREAM.claimMs })
      .where("event_id", "=", item.event_id)
      .where((eb) => eb.or([eb("claimed_until", "is", null), eb("claimed_until", "<=", now)]))
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) continue;
    let error: string | null = null;
    try {
      const settings = await db
        .selectFrom("audit_settings")
        .select(["siem_url", "siem_secret_ciphertext", "siem_enabled"])
        .where("team_id", "=", item.team_id)
        .executeTakeFirst();
      const row = await db
        .selectFrom("audit_events")
        .select([...AUDIT_COLUMNS])
        .where("id", "=", item.event_id)
        .executeTakeFirst();
      if (!settings?.siem_url || !settings.siem_secret_ciphertext || settings.siem_enabled !== 1 || !row) {
        // The stream was turned off (or the row purged) since: nothing to send.
        await db.deleteFrom("audit_outbox").where("event_id", "=", item.event_id).execute();
        continue;
      }
      const url = await assertSafeStreamUrl(settings.siem_url, { resolver: opts.resolver, allow });
      const secret = decrypt(settings.siem_secret_ciphertext, { aad: siemSecretAad(item.team_id) });
      const event = auditEventFromRow(row);
      const body = JSON.stringify({
        id: `evt_${event.id}`,
        type: "audit.event",
        created_at: event.createdAt.toISOString(),
        data: auditEventView(event),
      });
      const res = await post(
        url,
        allow,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "user-agent": "Baton-Audit-Stream/1",
            "x-orkestr-event": "audit.event",
            "x-orkestr-delivery": `dlv_${randomToken(12)}`,
            "x-orkestr-signature": signStreamBody(secret, body),
          },
          body,
        },
        opts,
      );
      await res.body?.cancel().catch(() => undefined);
      if (res.status < 200 || res.status >= 300) error = `the receiver answered HTTP ${res.status}`;
    } catch (err) {
      error =
        err instanceof AppError
          ? err.detail
          : err instanceof Error
            ? err.cause instanceof Error
              ? err.cause.message
              : err.message
            : String(err);
    }
    if (error === null) {
      await db.deleteFrom("audit_outbox").where("event_id", "=", item.event_id).execute();
      result.sent++;
      continue;
    }
    const attempts = item.attempts + 1;
    const gaveUp = attempts >= AUDIT_STREAM.maxAttempts;
    await db
      .updateTable("audit_outbox")
      .set({
        attempts,
        last_error: error.slice(0, 500),
        claimed_until: null,
        next_attempt_at: now + backoffMs(attempts),
        gave_up_at: gaveUp ? now : null,
      })
      .where("event_id", "=", item.event_id)
      .execute();
    if (gaveUp) result.gaveUp++;
    else result.failed++;
  }
  return result;
}

/** The stream's state for the settings card: rows waiting, given up, and the last error. */
export async function streamStatus(db: Db, teamId: string) {
  const row = await db
    .selectFrom("audit_outbox")
    .select([
      sql<number>`sum(case when gave_up_at is null then 1 else 0 end)`.as("pending"),
      sql<number>`sum(case when gave_up_at is null then 0 else 1 end)`.as("given_up"),
      sql<string | null>`max(last_error)`.as("last_error"),
    ])
    .where("team_id", "=", teamId)
    .executeTakeFirst();
  return {
    pending: Number(row?.pending ?? 0),
    given_up: Number(row?.given_up ?? 0),
    last_error: row?.last_error ?? null,
  };
}

// ---------------------------------------------------------------------------------------------
// This process's sender: a poll, and a nudge when a row is queued.

const holderKey = globalThis as typeof globalThis & { __batonAuditStream?: { stop(): void } };

export function startAuditStream(db: () => Promise<Db> | null, pollMs: number = AUDIT_STREAM.pollMs): void {
  if (holderKey.__batonAuditStream) return;
  let running = false;
  const pass = async () => {
    if (running) return;
    const pending = db();
    if (!pending) return;
    running = true;
    try {
      await drainAuditOutbox(await pending);
    } catch (err) {
      console.error("[baton] audit stream: a pass failed (the next one will try again)", err);
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void pass(), pollMs);
  timer.unref?.();
  const off = onAuditRecorded((_db, _event, queued) => {
    if (queued) setTimeout(() => void pass(), 50).unref?.();
  });
  holderKey.__batonAuditStream = {
    stop() {
      clearInterval(timer);
      off();
      holderKey.__batonAuditStream = undefined;
    },
  };
}

export function stopAuditStream(): void {
  holderKey.__batonAuditStream?.stop();
}
