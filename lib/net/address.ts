import dns from "node:dns";
import net from "node:net";
import os from "node:os";

// Address classification and a connect-time DNS guard, shared by the console (lib/server/ssrf.ts:
// user-supplied orkestr base URLs, the terminal relay) and the engine (webhook deliveries), so that
// both refuse the same internal ranges with the same words. Nothing here is server-only or
// Next-specific: it is plain Node.

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
  /** Public, but one of this machine's own (classifyDestination only). */
  | "own"
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
  { base: v4("0.0.0.0"), bits: 8, kind: "unspecified", label: 'an unspecified ("this network", 0.0.0.0/8) address' },
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
  const is = (kind: Exclude<AddressKind, "public" | "invalid">, label: string): AddressClass => ({
    kind,
    address,
    label,
  });
  const embed = (via: NonNullable<AddressClass["embedded"]>["via"], hi: number, lo: number): AddressClass => {
    const n = hi * 65536 + lo;
    const inner = classifyV4(n, address);
    const ipv4 = v4ToString(n);
    const how = {
      "ipv4-mapped": "IPv4-mapped",
      "ipv4-translated": "IPv4-translated",
      "ipv4-compatible": "IPv4-compatible",
      nat64: "NAT64",
      "6to4": "6to4",
    }[via];
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
  const address = input
    .trim()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/%.*$/, "");
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
// This machine's own addresses

const OWN_LABEL = "an address of this machine (one of its own network interfaces)";

/** One spelling per address: IPv4 dotted, IPv4-mapped IPv6 as its IPv4, other IPv6 as 8 hex groups. */
export function canonicalAddress(address: string): string {
  const a = stripBrackets(address).replace(/%.*$/, "").toLowerCase();
  if (net.isIPv4(a)) return a;
  const g = parseIPv6(a);
  if (!g) return a;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff)
    return [g[6]! >> 8, g[6]! & 0xff, g[7]! >> 8, g[7]! & 0xff].join(".");
  return g.map((x) => x.toString(16)).join(":");
}

/** The addresses of this machine's interfaces, canonical. Read at each check: interfaces come and go. */
export function ownAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(os.networkInterfaces()))
    for (const i of list ?? []) out.add(canonicalAddress(i.address));
  return out;
}

/**
 * Where a connection may go: classifyAddress(), except that this machine's own addresses, public
 * ones included, are `own`: through them a request reaches whatever listens on 0.0.0.0 here (the
 * database, the engine, an admin port), which no outside destination should. An IPv6 address that
 * embeds one of them (IPv4-mapped, NAT64, …) is `own` too.
 */
export function classifyDestination(address: string, own: ReadonlySet<string> = ownAddresses()): AddressClass {
  const cls = classifyAddress(address);
  if (cls.kind !== "public") return cls;
  const mine = own.has(canonicalAddress(cls.address)) || (cls.embedded !== undefined && own.has(cls.embedded.ipv4));
  return mine ? { kind: "own", address: cls.address, label: OWN_LABEL } : cls;
}

/** Whether a connection may go to this address: public, and not this machine's own. */
export function mayConnectTo(address: string, own?: ReadonlySet<string>): boolean {
  return classifyDestination(address, own).kind === "public";
}

// ---------------------------------------------------------------------------------------------
// Resolving and connecting

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses (like dns.lookup with `all: true`). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** The host part of a URL without IPv6 brackets: "[::1]" -> "::1". */
export function stripBrackets(hostname: string): string {
  return hostname.replace(/^\[(.*)\]$/, "$1");
}

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

export interface GuardedLookupOptions {
  resolver?: Resolver;
  /** Which addresses may be connected to; default mayConnectTo. A test seam, nothing more. */
  isAllowed?: (address: string) => boolean;
  /** Replaces this machine's interface addresses, read at each lookup by default (tests). */
  ownAddresses?: ReadonlySet<string>;
}

export type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

function guardedLookup(resolver: Resolver, opts: GuardedLookupOptions) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolver(hostname).then(
      (all) => {
        const wanted =
          options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (wanted.length === 0) {
          return callback(
            Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname }),
            "",
            0,
          );
        }
        const own = opts.ownAddresses ?? ownAddresses();
        const isAllowed = opts.isAllowed ?? ((a: string) => mayConnectTo(a, own));
        const bad = wanted.find((a) => !isAllowed(a.address));
        if (bad)
          return callback(
            new PrivateAddressRefused(hostname, classifyDestination(bad.address, own)) as NodeJS.ErrnoException,
            "",
            0,
          );
        if (options.all)
          return callback(
            null,
            wanted.map((a) => ({ address: a.address, family: a.family })),
          );
        callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
}

/**
 * A `lookup` for node:http/https/net (and `ws`) that resolves the host at connect time and refuses
 * it when any of its addresses is not allowed (default: not public, or this machine's own), so the
 * address connected to is the one checked and a name that re-resolves to an internal address (DNS
 * rebinding) fails.
 * Node does not call `lookup` for IP-literal hosts: the caller checks those itself.
 */
export function guardedLookupFor(
  opts: GuardedLookupOptions = {},
): (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => void {
  return guardedLookup(opts.resolver ?? systemResolver, opts);
}
