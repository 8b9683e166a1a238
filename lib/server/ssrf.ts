import "server-only";
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { Readable } from "node:stream";
import type { FetchLike } from "../orkestr/core.js";
import { localEngineOrigins } from "./local-engine.js";

// SSRF guard for user-supplied orkestr base URLs (issue 4, token vault). A connection's base URL
// is fetched server-side with the user's token, so it must not lead the console to loopback,
// private, link-local (cloud metadata) or otherwise internal addresses, the configured local
// engine excepted. Two layers:
// - assertSafeBaseUrl(): validates and normalises the URL and refuses hosts that resolve to a
//   non-public address (every address, not just the first), with a message naming why;
// - guardedFetch(): a fetch that checks the address again at connect time (its lookup hook), so a
//   name that re-resolves to an internal address later (DNS rebinding) is refused too.

// ---------------------------------------------------------------------------------------------
// Address classification

export type AddressKind =
  | "public"
  | "unspecified"
  | "loopback"
  | "private"
  | "cgnat"
  | "link_local"
  | "unique_local"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "invalid";

export interface AddressClass {
  kind: AddressKind;
  /** The address as given, without brackets or zone id. */
  address: string;
  /** Human-readable: "a private (RFC 1918) address". */
  label: string;
  /** When the class comes from an IPv4 address embedded in an IPv6 one. */
  embedded?: { via: "ipv4-mapped" | "ipv4-translated" | "ipv4-compatible" | "nat64" | "6to4"; ipv4: string };
}

interface V4Range {
  base: number;
  bits: number;
  kind: Exclude<AddressKind, "public" | "invalid">;
  label: string;
}

const v4 = (dotted: string): number => dotted.split(".").reduce((acc, octet) => acc * 256 + Number(octet), 0);

// Most specific first: the first match wins.
const V4_RANGES: V4Range[] = [
  { base: v4("169.254.169.254"), bits: 32, kind: "link_local", label: "the link-local cloud metadata address" },
  { base: v4("255.255.255.255"), bits: 32, kind: "broadcast", label: "the broadcast address" },
  { base: v4("0.0.0.0"), bits: 8, kind: "unspecified", label: "an unspecified (\"this network\", 0.0.0.0/8) address" },
  { base: v4("10.0.0.0"), bits: 8, kind: "private", label: "a private (RFC 1918) address" },
  { base: v4("100.64.0.0"), bits: 10, kind: "cgnat", label: "a carrier-grade NAT (100.64.0.0/10) address" },
  { base: v4("127.0.0.0"), bits: 8, kind: "loopback", label: "a loopback address" },
  { base: v4("169.254.0.0"), bits: 16, kind: "link_local", label: "a link-local address" },
  { base: v4("172.16.0.0"), bits: 12, kind: "private", label: "a private (RFC 1918) address" },
  { base: v4("192.0.0.0"), bits: 24, kind: "reserved", label: "a reserved (IETF protocol assignments) address" },
  { base: v4("192.0.2.0"), bits: 24, kind: "reserved", label: "a reserved (documentation) address" },
  { base: v4("192.88.99.0"), bits: 24, kind: "reserved", label: "a reserved (6to4 relay anycast) address" },
  { base: v4("192.168.0.0"), bits: 16, kind: "private", label: "a private (RFC 1918) address" },
  { base: v4("198.18.0.0"), bits: 15, kind: "reserved", label: "a reserved (benchmarking) address" },
  { base: v4("198.51.100.0"), bits: 24, kind: "reserved", label: "a reserved (documentation) address" },
  { base: v4("203.0.113.0"), bits: 24, kind: "reserved", label: "a reserved (documentation) address" },
  { base: v4("224.0.0.0"), bits: 4, kind: "multicast", label: "a multicast address" },
  { base: v4("240.0.0.0"), bits: 4, kind: "reserved", label: "a reserved (240.0.0.0/4) address" },
];

function inV4Range(n: number, r: V4Range): boolean {
  const size = 2 ** (32 - r.bits);
  return n >= r.base && n < r.base + size;
}

function v4ToString(n: number): string {
  return [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join(".");
}

function classifyV4(n: number, address: string): AddressClass {
  for (const r of V4_RANGES) if (inV4Range(n, r)) return { kind: r.kind, address, label: r.label };
  return { kind: "public", address, label: "a public address" };
}

/** Eight 16-bit groups of an IPv6 address (zone id already removed), or null when malformed. */
export function parseIPv6(input: string): number[] | null {
  if (!net.isIPv6(input)) return null;
  let text = input.toLowerCase();
  // A trailing dotted quad ("::ffff:1.2.3.4") becomes two hex groups.
  const quad = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (quad) {
    const n = v4(quad[1]!);
    text = `${text.slice(0, quad.index)}${((n >>> 16) & 0xffff).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (s: string) => (s === "" ? [] : s.split(":").map((g) => parseInt(g, 16)));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) return null;
  const groups = [...head, ...new Array<number>(halves.length === 2 ? fill : 0).fill(0), ...tail];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

function classifyV6(g: number[], address: string): AddressClass {
  const is = (kind: Exclude<AddressKind, "public" | "invalid">, label: string): AddressClass => ({ kind, address, label });
  const embed = (via: NonNullable<AddressClass["embedded"]>["via"], hi: number, lo: number): AddressClass => {
    const n = hi * 65536 + lo;
    const inner = classifyV4(n, address);
    const ipv4 = v4ToString(n);
    const how = { "ipv4-mapped": "IPv4-mapped", "ipv4-translated": "IPv4-translated", "ipv4-compatible": "IPv4-compatible", nat64: "NAT64", "6to4": "6to4" }[via];
    return {
      ...inner,
      label: inner.kind === "public" ? `a public address (${how} ${ipv4})` : `${inner.label} (${how} ${ipv4})`,
      embedded: { via, ipv4 },
    };
  };
  const [a, b, c, d, e, f, g6, h] = g as [number, number, number, number, number, number, number, number];
  const zeros = (...xs: number[]) => xs.every((x) => x === 0);

  if (zeros(a, b, c, d, e, f, g6, h)) return is("unspecified", "the unspecified address (::)");
  if (zeros(a, b, c, d, e, f, g6) && h === 1) return is("loopback", "the IPv6 loopback address (::1)");
  if (zeros(a, b, c, d, e) && f === 0xffff) return embed("ipv4-mapped", g6, h); // ::ffff:0:0/96
  if (zeros(a, b, c, d, f) && e === 0xffff) return embed("ipv4-translated", g6, h); // ::ffff:0:0:0/96
  if (zeros(a, b, c, d, e, f)) return embed("ipv4-compatible", g6, h); // ::/96, deprecated
  if (a === 0x64 && b === 0xff9b && zeros(c, d, e, f)) return embed("nat64", g6, h); // 64:ff9b::/96
  if (a === 0x64 && b === 0xff9b && c === 1) return is("private", "a local-use NAT64 address (64:ff9b:1::/48)");
  if (a === 0x100 && zeros(b, c, d)) return is("reserved", "a reserved (discard-only, 100::/64) address");
  if (a === 0x2001 && b === 0x0db8) return is("reserved", "a reserved (documentation) address");
  if (a === 0x2001 && b < 0x200) return is("reserved", "a reserved (IETF protocol assignments, incl. Teredo) address");
  if (a === 0x2002) return embed("6to4", b, c); // 2002:V4HI:V4LO::/48
  if (a >= 0x3fff && a < 0x4000 && b < 0x1000) return is("reserved", "a reserved (documentation, 3fff::/20) address");
  if ((a & 0xfe00) === 0xfc00) return is("unique_local", "a unique-local (fc00::/7) address");
  if ((a & 0xffc0) === 0xfe80) return is("link_local", "a link-local (fe80::/10) address");
  if ((a & 0xffc0) === 0xfec0) return is("private", "a site-local (fec0::/10, deprecated) address");
  if ((a & 0xff00) === 0xff00) return is("multicast", "a multicast address");
  // Only 2000::/3 is allocated as global unicast.
  if ((a & 0xe000) !== 0x2000) return is("reserved", "a reserved IPv6 address (outside 2000::/3)");
  return { kind: "public", address, label: "a public address" };
}

/**
 * Classifies an IP address (IPv4 dotted quad, or IPv6 with or without brackets and zone id). IPv6
 * addresses that embed an IPv4 one (IPv4-mapped, -translated, -compatible, NAT64 64:ff9b::/96,
 * 6to4) are classified by the embedded address. Anything but `public` must not be fetched.
 */
export function classifyAddress(input: string): AddressClass {
  const address = input.trim().replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  if (net.isIPv4(address)) return classifyV4(v4(address), address);
  const groups = parseIPv6(address);
  if (groups) return classifyV6(groups, address);
  return { kind: "invalid", address, label: "not an IP address" };
}

/** True only for globally routable unicast addresses. */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address).kind === "public";
}

// ---------------------------------------------------------------------------------------------
// Base URL validation

export type UnsafeUrlCode = "invalid_url" | "private_address" | "unresolvable_host";

/** A refused base URL. `detail` says exactly why, for the user; status 422 (it is their input). */
export class UnsafeUrlError extends Error {
  override name = "UnsafeUrlError";
  readonly status = 422;
  constructor(
    readonly code: UnsafeUrlCode,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(detail, options);
  }
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses (like dns.lookup with `all: true`). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export interface SafeUrlOptions {
  /** Replaces the system resolver (tests). */
  resolver?: Resolver;
  /** Origins exempt from the address checks; default: the configured local engine's (localEngineOrigins()). */
  localEngineOrigins?: readonly string[];
  /** DNS timeout, default 5 000 ms. */
  resolveTimeoutMs?: number;
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

function stripBrackets(hostname: string): string {
  return hostname.replace(/^\[(.*)\]$/, "$1");
}

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
  if (raw.length > MAX_URL_LENGTH) throw invalid(`The base URL is too long (${raw.length} characters; at most ${MAX_URL_LENGTH}).`);
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
  // An IP literal is judged before the scheme: "it is a private address" is the more useful answer.
  if (net.isIP(host)) {
    const cls = classifyAddress(host);
    if (cls.kind !== "public") throw new UnsafeUrlError("private_address", privateDetail(url.host, url.hostname, cls, allowed));
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
      throw new UnsafeUrlError("unresolvable_host", `The host name ${host} has no addresses in DNS. Check the spelling.`);
    }
  }
  for (const a of addresses) {
    const cls = classifyAddress(a.address);
    if (cls.kind !== "public") throw new UnsafeUrlError("private_address", privateDetail(url.host, url.hostname, cls, allowed));
  }
  return { baseUrl, url: normalized, origin: url.origin, isLocalEngine: false, addresses: addresses.map((a) => a.address) };
}

// ---------------------------------------------------------------------------------------------
// A fetch that re-checks addresses at connect time

/** The system error a guarded connection fails with when the address is not public. */
export class PrivateAddressRefused extends Error {
  override name = "PrivateAddressRefused";
  readonly code = "EPRIVATE_ADDRESS";
  constructor(
    readonly host: string,
    readonly classification: AddressClass,
  ) {
    super(
      stripBrackets(host) === classification.address
        ? `refused to connect to ${host}: it is ${classification.label}`
        : `refused to connect to ${host}: it resolves to ${classification.address}, ${classification.label}`,
    );
  }
}

export interface GuardedFetchOptions {
  resolver?: Resolver;
  /** Which addresses may be connected to; default isPublicAddress. A test seam, nothing more. */
  isAllowed?: (address: string) => boolean;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

function guardedLookup(resolver: Resolver, isAllowed: (a: string) => boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolver(hostname).then(
      (all) => {
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (wanted.length === 0) {
          return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname }), "", 0);
        }
        const bad = wanted.find((a) => !isAllowed(a.address));
        if (bad) return callback(new PrivateAddressRefused(hostname, classifyAddress(bad.address)) as NodeJS.ErrnoException, "", 0);
        if (options.all) return callback(null, wanted.map((a) => ({ address: a.address, family: a.family })));
        callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
}

/**
 * The connect-time DNS check of createGuardedFetch(), for other clients built on node:http (the PTY
 * WebSocket relay passes it to `ws` as its `lookup`). IP-literal hosts are checked by the caller.
 */
export function guardedLookupFor(opts: GuardedFetchOptions = {}): (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void {
  return guardedLookup(opts.resolver ?? systemResolver, opts.isAllowed ?? isPublicAddress);
}

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

async function bodyBytes(body: unknown): Promise<Buffer | Readable | null> {
  if (body === undefined || body === null) return null;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (typeof Blob !== "undefined" && body instanceof Blob) return Buffer.from(await body.arrayBuffer());
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), "utf8");
  if (typeof ReadableStream !== "undefined" && body instanceof ReadableStream) {
    return Readable.fromWeb(body as import("node:stream/web").ReadableStream<Uint8Array>);
  }
  throw new TypeError("guardedFetch: unsupported request body type");
}

/**
 * A fetch (for the orkestr client's `fetch` option) on node:http/https whose DNS lookup refuses
 * non-public addresses, so the address actually connected to is the one checked. IP-literal URLs
 * are checked before connecting. Redirects are never followed (the client wants them manual), and
 * the body streams unbuffered both ways. Failures reject like fetch: TypeError("fetch failed",
 * { cause }).
 */
export function createGuardedFetch(opts: GuardedFetchOptions = {}): FetchLike {
  const resolver = opts.resolver ?? systemResolver;
  const isAllowed = opts.isAllowed ?? isPublicAddress;
  const lookup = guardedLookup(resolver, isAllowed);
  // Own agents: their pooled sockets only ever connected to checked addresses.
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

  return async (input: string, init: RequestInit = {}): Promise<Response> => {
    const fail = (cause: unknown) => new TypeError("fetch failed", { cause });
    const url = new URL(input);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw fail(new Error(`unsupported protocol ${url.protocol}`));
    const host = stripBrackets(url.hostname);
    if (net.isIP(host) && !isAllowed(host)) throw fail(new PrivateAddressRefused(url.hostname, classifyAddress(host)));

    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw signal.reason ?? new DOMException("This operation was aborted", "AbortError");
    const method = (init.method ?? "GET").toUpperCase();
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    const body = await bodyBytes(init.body);
    if (Buffer.isBuffer(body)) headers["content-length"] = String(body.length);

    const mod = url.protocol === "https:" ? https : http;
    return new Promise<Response>((resolve, reject) => {
      let settled = false;
      const req = mod.request(url, {
        method,
        headers,
        lookup: lookup as unknown as http.RequestOptions["lookup"],
        agent: url.protocol === "https:" ? agents.https : agents.http,
      });
      const onAbort = () => {
        const reason: unknown = signal?.reason ?? new DOMException("This operation was aborted", "AbortError");
        req.destroy(reason instanceof Error ? reason : new Error(String(reason)));
        if (!settled) {
          settled = true;
          reject(reason);
        }
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      req.on("error", (err) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        reject(fail(err));
      });
      req.on("response", (res) => {
        settled = true;
        const status = res.statusCode ?? 502;
        const responseHeaders = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        const nullBody = NULL_BODY_STATUSES.has(status) || method === "HEAD";
        if (nullBody) res.resume();
        res.once("close", () => signal?.removeEventListener("abort", onAbort));
        const stream = nullBody ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
        try {
          resolve(new Response(stream, { status, statusText: res.statusMessage ?? "", headers: responseHeaders }));
        } catch (err) {
          res.destroy();
          reject(fail(err));
        }
      });
      if (body instanceof Readable) {
        body.on("error", (err) => req.destroy(err));
        body.pipe(req);
      } else {
        req.end(body ?? undefined);
      }
    });
  };
}

let sharedGuardedFetch: FetchLike | undefined;

/**
 * The fetch to reach a validated base URL with: the global fetch for the local engine (loopback by
 * configuration), a guarded one for everything else.
 */
export function fetchFor(safe: Pick<SafeBaseUrl, "isLocalEngine">, opts?: GuardedFetchOptions): FetchLike {
  if (safe.isLocalEngine) return (input, init) => fetch(input, init);
  if (opts) return createGuardedFetch(opts);
  sharedGuardedFetch ??= createGuardedFetch();
  return sharedGuardedFetch;
}
