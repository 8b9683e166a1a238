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
 * - except origins the operator lists in ORKESTR_ENGINE_WEBHOOK_ALLOW (the console's own receiver,
 *   say `http://127.0.0.1:3000`), which may be internal and plain http;
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

/** ORKESTR_ENGINE_WEBHOOK_ALLOW → normalised origins; throws on anything but bare http(s) origins. */
export function parseAllowedOrigins(list: string): string[] {
  const out = new Set<string>();
  for (const item of list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      throw new Error(`${WEBHOOK_ALLOW_ENV}: "${item}" is not a URL (want origins like http://127.0.0.1:3000)`);
    }
    if (
      (url.protocol !== "http:" && url.protocol !== "https:") ||
      url.username ||
      url.password ||
      url.search ||
      url.hash ||
      url.pathname !== "/"
    ) {
      throw new Error(`${WEBHOOK_ALLOW_ENV}: "${item}" is not a bare http(s) origin (scheme://host:port, no path)`);
    }
    out.add(url.origin);
  }
  return [...out];
}

/** Whether the URL's origin (scheme, host, port: exactly) is one the operator allowed. */
export function isAllowedOrigin(url: URL, allow: readonly string[]): boolean {
  return allow.includes(url.origin);
}

const WHY =
  "webhooks may only reach public addresses, so that a webhook cannot be used to reach services inside this machine's network";
const HOW = `(the engine's operator can allow an internal receiver's origin with ${WEBHOOK_ALLOW_ENV})`;

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
  if (isAllowedOrigin(url, allow)) return null;
  // An internal IP literal first: "it is a private address" says more than "use https".
  const host = stripBrackets(url.hostname);
  if (net.isIP(host)) {
    const refused = refusedAddress(host, opts.ownAddresses ?? ownAddresses());
    if (refused) return `${describe(url.hostname, refused)}: ${WHY} ${HOW}`;
  }
  if (url.protocol === "http:")
    return `webhook receivers must use https://; plain http:// is accepted only for origins the engine's operator allowed ${HOW}`;
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
  if (isAllowedOrigin(url, allow)) return { refused: null, lookup: undefined };
  const own = opts.ownAddresses ?? ownAddresses();
  const host = stripBrackets(url.hostname);
  if (net.isIP(host)) {
    const refused = refusedAddress(host, own);
    return refused ? { refused: refusal(url.hostname, refused) } : { refused: null, lookup: undefined };
  }
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
