import type { LookupFunction } from "node:net";
import net from "node:net";
import {
  classifyDestination,
  guardedLookupFor,
  ownAddresses,
  PrivateAddressRefused,
  stripBrackets,
  type AddressClass,
  type LookupCallback,
  type Resolver,
} from "../../../lib/net/address.js";

/**
 * Where a webhook may be delivered (security item 7). A webhook URL is chosen by an API client, and
 * the engine runs on a machine beside the console, databases and, on a cloud host, the metadata
 * service: without a guard a webhook reads like a request from inside. So:
 *
 * - a receiver must be `https://` on a **public** address (lib/net/address.ts: loopback, RFC 1918,
 *   CGNAT, link-local incl. 169.254.169.254, unique-local, multicast, reserved, IPv4 embedded in
 *   IPv6 and the rest are refused; the sandbox range 10.200.0.0/16 is RFC 1918);
 * - except receivers the operator lists in ORKESTR_ENGINE_WEBHOOK_ALLOW, which may be internal and
 *   plain http. An entry is a URL prefix, origin and path (`http://127.0.0.1:3000/api/hooks/`: the
 *   console's own receiver, and not its /login or /api/setup, whose answers the delivery log would
 *   show the webhook's owner); a bare origin still allows that whole origin, for operators who
 *   mean it. A prefix admits only plain paths below it (no percent-encoding, no empty, `.` or `..`
 *   segments, no query, no user info), so no spelling of a URL steps out of it on a server that
 *   decodes or normalises differently from the WHATWG parser;
 * - checked when a webhook is saved (an IP literal or a plain-http URL is a 422 at once), and again
 *   when each attempt connects: host names are resolved by the connection's own `lookup`, so the
 *   address connected to is the address checked, and a name that re-resolves to an internal
 *   address later (DNS rebinding) is refused without a request being made.
 * - Redirects are never followed (services/webhooks.ts: a 3xx is a failed attempt), so an allowed
 *   receiver cannot bounce a delivery inward either.
 * - This machine's own addresses are refused too, public ones included: through them a delivery
 *   would reach whatever listens on 0.0.0.0 here.
 */

export const WEBHOOK_ALLOW_ENV = "ORKESTR_ENGINE_WEBHOOK_ALLOW";
/** The error code of a connection the guard refused (like a system error's, so logs read alike). */
export const REFUSED_CODE = "EPRIVATE_ADDRESS";

/** A path below an allowed prefix: segments of unreserved characters only, none of them "." or "..". */
const PLAIN_SEGMENT = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$/;
const plainSegments = (path: string) => path.split("/").every((s) => PLAIN_SEGMENT.test(s) && s !== "." && s !== "..");

/**
 * ORKESTR_ENGINE_WEBHOOK_ALLOW → normalised entries: "scheme://host[:port]" (the whole origin) or
 * "scheme://host[:port]/path/" (URLs below that path). Throws on anything else.
 */
export function parseWebhookAllow(list: string): string[] {
  const out = new Set<string>();
  for (const item of list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      throw new Error(
        `${WEBHOOK_ALLOW_ENV}: "${item}" is not a URL (want receiver prefixes like http://127.0.0.1:3000/api/hooks/)`,
      );
    }
    const path = url.pathname.replace(/\/+$/, "");
    if (
      (url.protocol !== "http:" && url.protocol !== "https:") ||
      url.username ||
      url.password ||
      url.search ||
      url.hash ||
      item.includes("?") ||
      item.includes("#") ||
      (path !== "" && !plainSegments(path.slice(1)))
    ) {
      throw new Error(
        `${WEBHOOK_ALLOW_ENV}: "${item}" is not an http(s) receiver prefix (scheme://host:port/path/, a plain path without query, encoding or dot segments)`,
      );
    }
    out.add(path === "" ? url.origin : `${url.origin}${path}/`);
  }
  return [...out];
}

/** Whether an allow-list entry admits this URL: its whole origin, or a plain path below its prefix. */
function entryAdmits(entry: string, url: URL): boolean {
  const slash = entry.indexOf("/", entry.indexOf("//") + 2);
  const origin = slash < 0 ? entry : entry.slice(0, slash);
  if (url.origin !== origin) return false;
  if (slash < 0) return true;
  const prefix = entry.slice(slash);
  if (url.username || url.password || url.search || url.hash) return false;
  if (!url.pathname.startsWith(prefix)) return false;
  const rest = url.pathname.slice(prefix.length).replace(/\/$/, "");
  return rest !== "" && plainSegments(rest);
}

/** Whether the operator allowed this receiver (an entry of ORKESTR_ENGINE_WEBHOOK_ALLOW admits it). */
export function isAllowedReceiver(url: URL, allow: readonly string[]): boolean {
  return allow.some((entry) => entryAdmits(entry, url));
}

/** The allowed prefixes on this URL's origin, for a refusal that says what would have been accepted. */
function prefixesOn(url: URL, allow: readonly string[]): string[] {
  return allow.filter((entry) => entry.startsWith(`${url.origin}/`));
}

const WHY =
  "webhooks may only reach public addresses, so that a webhook cannot be used to reach services inside this machine's network";
const HOW = `(the engine's operator can allow an internal receiver with ${WEBHOOK_ALLOW_ENV})`;

export { ownAddresses };

/** Why this address must not be connected to (its class, or that it is this machine's own), or null. */
function refusedAddress(address: string, own: ReadonlySet<string>): AddressClass | null {
  const cls = classifyDestination(address, own);
  return cls.kind === "public" ? null : cls;
}

/** "10.0.0.5 is a private (RFC 1918) address" / "localhost resolves to 127.0.0.1, a loopback address". */
function describe(host: string, r: AddressClass): string {
  return stripBrackets(host) === r.address ? `${host} is ${r.label}` : `${host} resolves to ${r.address}, ${r.label}`;
}

export interface GuardOptions {
  /** Replaces the system resolver (tests). */
  resolver?: Resolver;
  /** Replaces this machine's interface addresses (tests). */
  ownAddresses?: ReadonlySet<string>;
}

/**
 * Why a receiver URL is refused when a webhook is saved, or null when it is acceptable. Only
 * parses, never resolves: an IP literal is judged here, a host name at connect time (what it
 * resolves to now proves nothing about later).
 */
export function receiverUrlProblem(raw: string, allow: readonly string[], opts: GuardOptions = {}): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "url must be an absolute https:// URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return `url must be https:// (got ${url.protocol.replace(/:$/, "")}:)`;
  if (isAllowedReceiver(url, allow)) return null;
  const problem = publicReceiverProblem(url, opts);
  const prefixes = prefixesOn(url, allow);
  // The operator allowed part of this origin: say which part, since that is what was meant.
  if (problem && prefixes.length)
    return `${problem}; on ${url.origin} only URLs under ${prefixes.join(" or ")} are allowed`;
  return problem;
}

/** Why a URL that no allow-list entry admits is refused: an internal IP literal, or plain http. */
function publicReceiverProblem(url: URL, opts: GuardOptions): string | null {
  // An internal IP literal first: "it is a private address" says more than "use https".
  const host = stripBrackets(url.hostname);
  if (net.isIP(host)) {
    const refused = refusedAddress(host, opts.ownAddresses ?? ownAddresses());
    if (refused) return `${describe(url.hostname, refused)}: ${WHY} ${HOW}`;
  }
  if (url.protocol === "http:")
    return `webhook receivers must use https://; plain http:// is accepted only for receivers the engine's operator allowed ${HOW}`;
  return null;
}

/** What a delivery attempt may do: connect (with this lookup, when the host is a name) or nothing. */
export type ConnectPlan = { refused: string } | { refused: null; lookup: LookupFunction | undefined };

/**
 * The connect-time check of one attempt. An allowed origin connects as configured. An IP literal
 * is judged now (Node does not call `lookup` for literals). A host name gets a `lookup` that
 * resolves it and refuses every non-public answer, with an error whose message is the delivery
 * log's reason.
 */
export function connectPlan(url: URL, allow: readonly string[], opts: GuardOptions = {}): ConnectPlan {
  if (isAllowedReceiver(url, allow)) return { refused: null, lookup: undefined };
  const own = opts.ownAddresses ?? ownAddresses();
  const host = stripBrackets(url.hostname);
  const literal = net.isIP(host) ? refusedAddress(host, own) : null;
  if (literal) return { refused: refusal(url.hostname, literal) };
  // As when saved: plain http only to an allowed receiver. A webhook saved under an older, wider
  // allow-list (a whole origin) that the list no longer admits is refused before any request.
  if (url.protocol === "http:")
    return {
      refused: `refused: ${url.origin}${url.pathname} is plain http:// and no allowed receiver, so no request was made ${HOW}`,
    };
  if (net.isIP(host)) return { refused: null, lookup: undefined };
  const guarded = guardedLookupFor({ resolver: opts.resolver, ownAddresses: own });
  const lookup = (hostname: string, options: object, callback: LookupCallback): void =>
    guarded(hostname, options, (err, address, family) => {
      if (err instanceof PrivateAddressRefused) {
        return callback(Object.assign(new Error(refusal(err.host, err.classification)), { code: REFUSED_CODE }), "", 0);
      }
      callback(err, address, family);
    });
  return { refused: null, lookup: lookup as unknown as LookupFunction };
}

/** The delivery log's error for a refused connection: "refused: 10.0.0.5 is a private (RFC 1918) address; …". */
function refusal(host: string, r: AddressClass): string {
  return `refused: ${describe(host, r)}; ${WHY}, so no request was made ${HOW}`;
}
