import "server-only";
import http from "node:http";
import net from "node:net";
import {
  classifyDestination,
  guardedLookupFor,
  mayConnectTo,
  ownAddresses,
  PrivateAddressRefused,
  stripBrackets,
  systemResolver,
  type AddressClass,
  type GuardedLookupOptions,
  type ResolvedAddress,
  type Resolver,
} from "../net/address";
import type { FetchLike } from "../orkestr/core";
import { createNodeFetch } from "./node-fetch";
import { localEngineOrigins } from "./local-engine";
import { UserFacingError } from "./user-error";

// The address classifier and the connect-time lookup live in lib/net/address.ts (the engine's
// webhook deliveries use them too); re-exported here so the console keeps one import.
export {
  classifyAddress,
  classifyDestination,
  guardedLookupFor,
  isPublicAddress,
  mayConnectTo,
  ownAddresses,
  parseIPv6,
  PrivateAddressRefused,
  systemResolver,
  type AddressClass,
  type AddressKind,
  type ResolvedAddress,
  type Resolver,
} from "../net/address";
export type GuardedFetchOptions = GuardedLookupOptions;

// SSRF guard for user-supplied orkestr base URLs (issue 4, token vault). A connection's base URL
// is fetched server-side with the user's token, so it must not lead the console to loopback,
// private, link-local (cloud metadata) or otherwise internal addresses, nor to this machine's own
// public ones (they reach what listens on 0.0.0.0 here), the configured local engine excepted.
// Two layers:
// - assertSafeBaseUrl(): validates and normalises the URL and refuses hosts that resolve to a
//   non-public address (every address, not just the first), with a message naming why;
// - guardedFetch(): a fetch that checks the address again at connect time (its lookup hook), so a
//   name that re-resolves to an internal address later (DNS rebinding) is refused too.

// ---------------------------------------------------------------------------------------------
// Base URL validation

export type UnsafeUrlCode = "invalid_url" | "private_address" | "unresolvable_host";

/** A refused base URL. `detail` says exactly why, for the user; status 422 (it is their input). */
export class UnsafeUrlError extends UserFacingError<UnsafeUrlCode> {
  override name = "UnsafeUrlError";
  readonly status = 422;
  constructor(code: UnsafeUrlCode, detail: string, options: { cause?: unknown } = {}) {
    super(code, detail, { ...options, field: "base_url" });
  }
}

export interface SafeUrlOptions {
  /** Replaces the system resolver (tests). */
  resolver?: Resolver;
  /** Origins exempt from the address checks; default: the configured local engine's (localEngineOrigins()). */
  localEngineOrigins?: readonly string[];
  /** DNS timeout, default 5 000 ms. */
  resolveTimeoutMs?: number;
  /** Replaces this machine's interface addresses (tests). */
  ownAddresses?: ReadonlySet<string>;
}

export interface SafeBaseUrl {
  /** Normalised: origin + path, no trailing slash, no trailing `/v1` (e.g. "https://api.orkestr.eu"). */
  baseUrl: string;
  /** The same as a URL object. */
  url: URL;
  origin: string;
  /** True when this is the configured local engine (loopback and http allowed). */
  isLocalEngine: boolean;
  /** What the host resolved to (empty for the local engine, which is not resolved). */
  addresses: string[];
}

const MAX_URL_LENGTH = 2048;

function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(onTimeout()), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

function privateDetail(shown: string, host: string, cls: AddressClass, allowed: readonly string[]): string {
  const resolves = stripBrackets(host) === cls.address ? `${shown} is` : `${shown} resolves to ${cls.address},`;
  const engine = allowed[0] ? ` The only internal address allowed is the local engine at ${allowed[0]}.` : "";
  return (
    `${resolves} ${cls.label}. Baton refuses loopback, private, link-local and other internal addresses so that a ` +
    `connection cannot reach services inside this network; use the orkestr API's public address.${engine}`
  );
}

/**
 * Validates a user-supplied orkestr base URL and returns it normalised. Refuses (UnsafeUrlError):
 * non-URLs, schemes other than https (http only for the local engine), credentials, query strings
 * and fragments (`invalid_url`); hosts that do not resolve (`unresolvable_host`); hosts with any
 * address that is not public (`private_address`), the configured local engine's origin excepted.
 */
export async function assertSafeBaseUrl(input: string, opts: SafeUrlOptions = {}): Promise<SafeBaseUrl> {
  const raw = (input ?? "").trim();
  const invalid = (why: string) => new UnsafeUrlError("invalid_url", why);
  if (!raw) throw invalid("Enter the base URL of the orkestr API, e.g. https://api.orkestr.eu.");
  if (raw.length > MAX_URL_LENGTH)
    throw invalid(`The base URL is too long (${raw.length} characters; at most ${MAX_URL_LENGTH}).`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`"${raw.slice(0, 200)}" is not a URL. Include the scheme, e.g. https://api.orkestr.eu.`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw invalid(`The base URL must start with https:// (got "${url.protocol}").`);
  }
  if (url.username || url.password) {
    throw invalid("The base URL must not contain a user name or password: the token goes in the token field.");
  }
  if (url.search || url.hash || /[?#]/.test(raw)) {
    throw invalid("The base URL must not have a query string (?…) or fragment (#…).");
  }
  if (!url.hostname) throw invalid("The base URL has no host name.");

  const path = url.pathname.replace(/\/+$/, "").replace(/\/v1$/i, "").replace(/\/+$/, "");
  const baseUrl = `${url.origin}${path}`;
  const normalized = new URL(baseUrl);
  const allowed = opts.localEngineOrigins ?? localEngineOrigins();
  if (allowed.includes(url.origin)) {
    return { baseUrl, url: normalized, origin: url.origin, isLocalEngine: true, addresses: [] };
  }

  const host = stripBrackets(url.hostname);
  const own = opts.ownAddresses ?? ownAddresses();
  // An IP literal is judged before the scheme: "it is a private address" is the more useful answer.
  if (net.isIP(host)) {
    const cls = classifyDestination(host, own);
    if (cls.kind !== "public")
      throw new UnsafeUrlError("private_address", privateDetail(url.host, url.hostname, cls, allowed));
  }
  // "localhost" is resolved first too: "it is loopback" says more than "use https".
  const localhostName = host === "localhost" || host.endsWith(".localhost");
  if (url.protocol !== "https:" && !localhostName) {
    const engine = allowed[0] ? ` Plain http is only allowed for the local engine at ${allowed[0]}.` : "";
    throw invalid(`The base URL must use https:// so the token is never sent in the clear.${engine}`);
  }

  let addresses: ResolvedAddress[];
  if (net.isIP(host)) {
    addresses = [{ address: host, family: net.isIP(host) }];
  } else {
    const resolver = opts.resolver ?? systemResolver;
    const timeoutMs = opts.resolveTimeoutMs ?? 5_000;
    try {
      addresses = await withTimeout(resolver(host), timeoutMs, () =>
        Object.assign(new Error(`DNS lookup timed out after ${timeoutMs} ms`), { code: "ETIMEOUT" }),
      );
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why =
        code === "ENOTFOUND" || code === "ENODATA" || code === "EAI_NONAME"
          ? "does not exist in DNS. Check the spelling"
          : code === "ETIMEOUT"
            ? `did not resolve within ${Math.round(timeoutMs / 1000)} s (the DNS server did not answer). Try again`
            : `could not be resolved (${code ?? (err as Error).message}). Check the spelling, or try again if the DNS server is having trouble`;
      throw new UnsafeUrlError("unresolvable_host", `The host name ${host} ${why}.`, { cause: err });
    }
    if (addresses.length === 0) {
      throw new UnsafeUrlError(
        "unresolvable_host",
        `The host name ${host} has no addresses in DNS. Check the spelling.`,
      );
    }
  }
  for (const a of addresses) {
    const cls = classifyDestination(a.address, own);
    if (cls.kind !== "public")
      throw new UnsafeUrlError("private_address", privateDetail(url.host, url.hostname, cls, allowed));
  }
  return {
    baseUrl,
    url: normalized,
    origin: url.origin,
    isLocalEngine: false,
    addresses: addresses.map((a) => a.address),
  };
}

// ---------------------------------------------------------------------------------------------
// A fetch that re-checks addresses at connect time

/**
 * A fetch (for the orkestr client's `fetch` option) on node:http/https (lib/server/node-fetch.ts)
 * whose DNS lookup refuses non-public addresses and this machine's own, so the address actually
 * connected to is the one checked. IP-literal URLs are checked before connecting.
 */
export function createGuardedFetch(opts: GuardedFetchOptions = {}): FetchLike {
  const lookup = guardedLookupFor(opts);
  return createNodeFetch({
    lookup: lookup as unknown as http.RequestOptions["lookup"],
    refuse: (url) => {
      const host = stripBrackets(url.hostname);
      if (!net.isIP(host)) return null;
      const own = opts.ownAddresses ?? ownAddresses();
      const allowed = opts.isAllowed ? opts.isAllowed(host) : mayConnectTo(host, own);
      return allowed ? null : new PrivateAddressRefused(url.hostname, classifyDestination(host, own));
    },
  });
}

let sharedGuardedFetch: FetchLike | undefined;
let sharedLocalFetch: FetchLike | undefined;

/**
 * The fetch to reach a validated base URL with: a plain one for the local engine (loopback by
 * configuration), a guarded one for everything else. Both are shared, keep-alive, per process.
 */
export function fetchFor(safe: Pick<SafeBaseUrl, "isLocalEngine">, opts?: GuardedFetchOptions): FetchLike {
  if (safe.isLocalEngine) return (sharedLocalFetch ??= createNodeFetch());
  if (opts) return createGuardedFetch(opts);
  sharedGuardedFetch ??= createGuardedFetch();
  return sharedGuardedFetch;
}
