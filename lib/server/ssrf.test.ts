import "server-only";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createOrkestrClient } from "../orkestr/core";
import { resetEnvForTests } from "./env";
import {
  assertSafeBaseUrl,
  classifyAddress,
  createGuardedFetch,
  isPublicAddress,
  parseIPv6,
  PrivateAddressRefused,
  UnsafeUrlError,
  type AddressKind,
  type Resolver,
} from "./ssrf";
import { rejectsWith } from "../../engine/test/helpers/async";

// No test here sends traffic off this machine: host names resolve through injected resolvers
// (only `localhost` goes to the system resolver), and the guarded fetch talks to a server on
// 127.0.0.1 that counts every connection it accepts.

const ENGINE = "http://127.0.0.1:8787";

/** A resolver from a fixed table; unknown names fail like getaddrinfo does. */
function table(entries: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const r = async (host: string) => {
    calls.push(host);
    const list = entries[host];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return list.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(r, { calls });
}

const noDns: Resolver = async (host) => {
  throw new Error(`unexpected DNS lookup of ${host}`);
};

describe("classifyAddress", () => {
  const cases: [string, AddressKind][] = [
    // IPv4
    ["8.8.8.8", "public"],
    ["1.1.1.1", "public"],
    ["93.184.216.34", "public"],
    ["0.0.0.0", "unspecified"],
    ["0.255.255.255", "unspecified"],
    ["10.0.0.0", "private"],
    ["10.255.255.255", "private"],
    ["11.0.0.0", "public"],
    ["100.63.255.255", "public"],
    ["100.64.0.0", "cgnat"],
    ["100.127.255.255", "cgnat"],
    ["100.128.0.0", "public"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["169.254.0.1", "link_local"],
    ["169.254.169.254", "link_local"],
    ["172.15.255.255", "public"],
    ["172.16.0.0", "private"],
    ["172.31.255.255", "private"],
    ["172.32.0.0", "public"],
    ["192.0.0.8", "reserved"],
    ["192.0.2.1", "reserved"],
    ["192.88.99.1", "reserved"],
    ["192.167.255.255", "public"],
    ["192.168.0.1", "private"],
    ["192.168.255.255", "private"],
    ["192.169.0.0", "public"],
    ["198.17.255.255", "public"],
    ["198.18.0.0", "reserved"],
    ["198.19.255.255", "reserved"],
    ["198.20.0.0", "public"],
    ["198.51.100.7", "reserved"],
    ["203.0.113.9", "reserved"],
    ["223.255.255.255", "public"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.254", "reserved"],
    ["255.255.255.255", "broadcast"],
    // IPv6
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["[::1]", "loopback"],
    ["2606:4700:4700::1111", "public"],
    ["2a00:1450:4001:80b::200e", "public"],
    ["fc00::1", "unique_local"],
    ["fd12:3456:789a::1", "unique_local"],
    ["fd00:ec2::254", "unique_local"],
    ["fe80::1", "link_local"],
    ["fe80::1%eth0", "link_local"],
    ["febf:ffff::1", "link_local"],
    ["fec0::1", "private"],
    ["ff02::1", "multicast"],
    ["ff0e::101", "multicast"],
    ["100::1", "reserved"],
    ["2001:db8::1", "reserved"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"], // Teredo
    ["3fff::1", "reserved"],
    ["4000::1", "reserved"],
    ["64:ff9b:1::a00:1", "private"],
    // IPv4 embedded in IPv6: judged by the IPv4 address
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::FFFF:10.1.2.3", "private"],
    ["::ffff:169.254.169.254", "link_local"],
    ["::ffff:8.8.8.8", "public"],
    ["::ffff:0:192.168.1.1", "private"], // IPv4-translated
    ["::127.0.0.1", "loopback"], // IPv4-compatible
    ["::10.0.0.1", "private"],
    ["64:ff9b::127.0.0.1", "loopback"], // NAT64
    ["64:ff9b::a9fe:a9fe", "link_local"], // NAT64 of 169.254.169.254
    ["64:ff9b::c0a8:101", "private"],
    ["64:ff9b::808:808", "public"],
    ["2002:7f00:1::", "loopback"], // 6to4 of 127.0.0.1
    ["2002:a00:1::1", "private"], // 6to4 of 10.0.0.1
    ["2002:808:808::1", "public"],
    // not addresses
    ["localhost", "invalid"],
    ["256.1.1.1", "invalid"],
    ["1.2.3", "invalid"],
    ["01.2.3.4", "invalid"],
    ["1::2::3", "invalid"],
    ["", "invalid"],
  ];
  it.each(cases)("%s is %s", (address, kind) => {
    expect(classifyAddress(address).kind).toBe(kind);
    expect(isPublicAddress(address)).toBe(kind === "public");
  });

  it("names the cloud metadata address and the embedded IPv4 address", () => {
    expect(classifyAddress("169.254.169.254").label).toMatch(/metadata/);
    const nat64 = classifyAddress("64:ff9b::a9fe:a9fe");
    expect(nat64.embedded).toEqual({ via: "nat64", ipv4: "169.254.169.254" });
    expect(nat64.label).toMatch(/metadata.*NAT64 169\.254\.169\.254/);
    expect(classifyAddress("::ffff:10.0.0.1").embedded).toEqual({ via: "ipv4-mapped", ipv4: "10.0.0.1" });
    expect(classifyAddress("2002:a00:1::1").embedded).toEqual({ via: "6to4", ipv4: "10.0.0.1" });
    expect(classifyAddress("10.1.1.1").label).toBe("a private (RFC 1918) address");
  });

  it("parses IPv6 forms into eight groups", () => {
    expect(parseIPv6("::")).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6("::1")).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6("fe80::")).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6("1:2:3:4:5:6:7:8")).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseIPv6("1:2:3::8")).toEqual([1, 2, 3, 0, 0, 0, 0, 8]);
    expect(parseIPv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]);
    expect(parseIPv6("1.2.3.4")).toBeNull();
    expect(parseIPv6("1:2:3:4:5:6:7:8:9")).toBeNull();
  });
});

describe("assertSafeBaseUrl", () => {
  const opts = {
    localEngineOrigins: [ENGINE],
    resolver: table({ "api.orkestr.eu": ["185.12.64.1", "2a01:4f8::1"], "api.example.test": ["93.184.216.34"] }),
  };

  it("normalises: origin + path, no trailing slash, no trailing /v1", async () => {
    const cases: [string, string][] = [
      ["https://api.orkestr.eu", "https://api.orkestr.eu"],
      ["https://api.orkestr.eu/", "https://api.orkestr.eu"],
      ["https://api.orkestr.eu/v1", "https://api.orkestr.eu"],
      ["  https://API.Orkestr.EU/v1/  ", "https://api.orkestr.eu"],
      ["https://api.orkestr.eu:443/v1", "https://api.orkestr.eu"],
      ["https://api.example.test:8443/orkestr/v1", "https://api.example.test:8443/orkestr"],
      ["https://api.example.test/prefix//", "https://api.example.test/prefix"],
    ];
    for (const [input, want] of cases) {
      const safe = await assertSafeBaseUrl(input, opts);
      expect(safe.baseUrl, input).toBe(want);
      expect(safe.isLocalEngine).toBe(false);
    }
    const safe = await assertSafeBaseUrl("https://api.orkestr.eu/v1", opts);
    expect(safe.addresses).toEqual(["185.12.64.1", "2a01:4f8::1"]);
    expect(safe.origin).toBe("https://api.orkestr.eu");
    expect(safe.url.href).toBe("https://api.orkestr.eu/");
  });

  it("refuses what is not an http(s) URL without credentials, query or fragment", async () => {
    const cases: [string, RegExp][] = [
      ["", /Enter the base URL/],
      ["   ", /Enter the base URL/],
      ["api.orkestr.eu", /is not a URL\. Include the scheme/],
      ["ftp://api.orkestr.eu", /must start with https:\/\/ \(got "ftp:"\)/],
      ["file:///etc/passwd", /must start with https:\/\//],
      ["javascript:alert(1)", /must start with https:\/\//],
      ["https://user:secret@api.orkestr.eu", /must not contain a user name or password/],
      ["https://api.orkestr.eu/v1?x=1", /query string/],
      ["https://api.orkestr.eu/#frag", /fragment/],
      ["https://api.orkestr.eu/?", /query string/],
      [
        "http://api.orkestr.eu",
        /must use https:\/\/ so the token is never sent in the clear\. Plain http is only allowed for the local engine at http:\/\/127\.0\.0\.1:8787/,
      ],
      [`https://${"a".repeat(2100)}.eu`, /too long/],
    ];
    for (const [input, detail] of cases) {
      const err = await rejectsWith(
        assertSafeBaseUrl(input, { localEngineOrigins: [ENGINE], resolver: noDns }),
        UnsafeUrlError,
      );
      expect(err.code, input).toBe("invalid_url");
      expect(err.status).toBe(422);
      expect(err.detail, input).toMatch(detail);
    }
  });

  it("refuses IP literals that are not public, whatever their spelling, without resolving", async () => {
    const cases: [string, RegExp][] = [
      ["https://10.0.0.1", /^10\.0\.0\.1 is a private \(RFC 1918\) address\./],
      ["https://192.168.1.10:8443/v1", /^192\.168\.1\.10:8443 is a private/],
      ["https://172.20.1.1", /private \(RFC 1918\)/],
      ["https://100.64.1.1", /carrier-grade NAT/],
      ["https://127.0.0.1", /loopback/],
      ["https://127.1", /^127\.0\.0\.1 is a loopback address/],
      ["https://2130706433", /^127\.0\.0\.1 is a loopback address/],
      ["https://0x7f000001", /^127\.0\.0\.1 is a loopback address/],
      ["https://0177.0.0.1", /^127\.0\.0\.1 is a loopback address/],
      ["https://0.0.0.0", /unspecified/],
      ["https://169.254.169.254/latest/meta-data", /link-local cloud metadata address/],
      ["http://169.254.169.254", /link-local cloud metadata address/],
      ["https://[::1]:8787", /^\[::1\]:8787 is the IPv6 loopback address/],
      ["https://[::]", /unspecified/],
      ["https://[fd00::1]", /unique-local/],
      ["https://[fe80::1]", /link-local/],
      ["https://[ff02::1]", /multicast/],
      ["https://[::ffff:127.0.0.1]", /loopback address \(IPv4-mapped 127\.0\.0\.1\)/],
      ["https://[::ffff:a9fe:a9fe]", /metadata address \(IPv4-mapped 169\.254\.169\.254\)/],
      ["https://[64:ff9b::10.0.0.1]", /private \(RFC 1918\) address \(NAT64 10\.0\.0\.1\)/],
      ["https://224.0.0.1", /multicast/],
      ["https://255.255.255.255", /broadcast/],
    ];
    for (const [input, detail] of cases) {
      const err = await rejectsWith(
        assertSafeBaseUrl(input, { localEngineOrigins: [ENGINE], resolver: noDns }),
        UnsafeUrlError,
      );
      expect(err.code, input).toBe("private_address");
      expect(err.detail, input).toMatch(detail);
      expect(err.detail).toMatch(/Baton refuses loopback, private, link-local and other internal addresses/);
      expect(err.detail).toMatch(
        /The only internal address allowed is the local engine at http:\/\/127\.0\.0\.1:8787\./,
      );
    }
  });

  it("accepts public IP literals without resolving", async () => {
    const safe = await assertSafeBaseUrl("https://93.184.216.34/v1", { localEngineOrigins: [ENGINE], resolver: noDns });
    expect(safe).toMatchObject({
      baseUrl: "https://93.184.216.34",
      addresses: ["93.184.216.34"],
      isLocalEngine: false,
    });
    const v6 = await assertSafeBaseUrl("https://[2606:4700:4700::1111]", {
      localEngineOrigins: [ENGINE],
      resolver: noDns,
    });
    expect(v6.addresses).toEqual(["2606:4700:4700::1111"]);
  });

  it("refuses this machine's own addresses, public ones included (through them Baton reaches what listens on 0.0.0.0 here)", async () => {
    const own = new Set(["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]);
    const resolver = table({
      "me.example": ["93.184.216.34"],
      "v6.me.example": ["2606:2800:220:1:248:1893:25c8:1946"],
    });
    const cases: [string, RegExp][] = [
      [
        "https://93.184.216.34",
        /^93\.184\.216\.34 is an address of this machine \(one of its own network interfaces\)\./,
      ],
      ["https://[::ffff:93.184.216.34]", /an address of this machine/],
      ["https://[2606:2800:0220:0001:0248:1893:25c8:1946]", /an address of this machine/],
      ["https://me.example", /^me\.example resolves to 93\.184\.216\.34, an address of this machine/],
      ["https://v6.me.example", /resolves to 2606:2800:220:1:248:1893:25c8:1946, an address of this machine/],
    ];
    for (const [input, detail] of cases) {
      const err = await rejectsWith(
        assertSafeBaseUrl(input, { localEngineOrigins: [ENGINE], resolver, ownAddresses: own }),
        UnsafeUrlError,
      );
      expect(err.code, input).toBe("private_address");
      expect(err.detail, input).toMatch(detail);
    }
    const other = await assertSafeBaseUrl("https://93.184.216.35", { localEngineOrigins: [ENGINE], ownAddresses: own });
    expect(other.addresses).toEqual(["93.184.216.35"]);
  });

  it("refuses host names when any of their addresses is internal", async () => {
    const resolver = table({
      "intranet.example": ["10.20.30.40"],
      "split.example": ["93.184.216.34", "192.168.0.5"],
      "meta.example": ["169.254.169.254"],
      "v6only.example": ["fd00:ec2::254"],
      "mapped.example": ["::ffff:127.0.0.1"],
    });
    const cases: [string, RegExp][] = [
      ["https://intranet.example", /^intranet\.example resolves to 10\.20\.30\.40, a private \(RFC 1918\) address\./],
      ["https://split.example/v1", /^split\.example resolves to 192\.168\.0\.5, a private/],
      ["https://meta.example", /resolves to 169\.254\.169\.254, the link-local cloud metadata address/],
      ["https://v6only.example", /resolves to fd00:ec2::254, a unique-local/],
      ["https://mapped.example", /resolves to ::ffff:127\.0\.0\.1, a loopback address \(IPv4-mapped 127\.0\.0\.1\)/],
    ];
    for (const [input, detail] of cases) {
      const err = await rejectsWith(
        assertSafeBaseUrl(input, { localEngineOrigins: [ENGINE], resolver }),
        UnsafeUrlError,
      );
      expect(err.code, input).toBe("private_address");
      expect(err.detail, input).toMatch(detail);
    }
  });

  it("refuses localhost through the system resolver", async () => {
    const err = await rejectsWith(
      assertSafeBaseUrl("https://localhost:9443", { localEngineOrigins: [ENGINE] }),
      UnsafeUrlError,
    );
    expect(err.code).toBe("private_address");
    expect(err.detail).toMatch(/^localhost:9443 resolves to (127\.0\.0\.1|::1), (a|the IPv6) loopback address/);
  });

  it("says when a host does not resolve", async () => {
    const missing = await rejectsWith(
      assertSafeBaseUrl("https://api.orkestr.example", { localEngineOrigins: [ENGINE], resolver: table({}) }),
      UnsafeUrlError,
    );
    expect(missing.code).toBe("unresolvable_host");
    expect(missing.detail).toBe("The host name api.orkestr.example does not exist in DNS. Check the spelling.");

    const empty = await rejectsWith(
      assertSafeBaseUrl("https://empty.example", { localEngineOrigins: [ENGINE], resolver: async () => [] }),
      UnsafeUrlError,
    );
    expect(empty.code).toBe("unresolvable_host");
    expect(empty.detail).toMatch(/has no addresses/);

    const hanging = await rejectsWith(
      assertSafeBaseUrl("https://slow.example", {
        localEngineOrigins: [ENGINE],
        resolver: () => new Promise(() => {}),
        resolveTimeoutMs: 30,
      }),
      UnsafeUrlError,
    );
    expect(hanging.code).toBe("unresolvable_host");
    expect(hanging.detail).toMatch(/did not resolve within 0 s|did not resolve within/);

    const servfail = await rejectsWith(
      assertSafeBaseUrl("https://flaky.example", {
        localEngineOrigins: [ENGINE],
        resolver: async () => {
          throw Object.assign(new Error("queryA ESERVFAIL"), { code: "ESERVFAIL" });
        },
      }),
      UnsafeUrlError,
    );
    expect(servfail.detail).toBe(
      "The host name flaky.example could not be resolved (ESERVFAIL). Check the spelling, or try again if the DNS server is having trouble.",
    );
  });

  it("allows the configured local engine's origin, over http, without resolving", async () => {
    for (const input of [ENGINE, `${ENGINE}/`, `${ENGINE}/v1`, `${ENGINE}/v1/`]) {
      const safe = await assertSafeBaseUrl(input, { localEngineOrigins: [ENGINE], resolver: noDns });
      expect(safe).toMatchObject({ baseUrl: ENGINE, origin: ENGINE, isLocalEngine: true, addresses: [] });
    }
    // Another port, another loopback spelling or https on the engine's port are not the engine.
    for (const input of [
      "http://127.0.0.1:8788",
      "http://localhost:8787",
      "https://127.0.0.1:8787",
      "http://[::1]:8787",
      "http://127.0.0.2:8787",
    ]) {
      const err = await rejectsWith(assertSafeBaseUrl(input, { localEngineOrigins: [ENGINE] }), UnsafeUrlError);
      expect(err.code, input).toBe("private_address");
    }
    const localhost = await rejectsWith(
      assertSafeBaseUrl("http://localhost:8787", { localEngineOrigins: [ENGINE] }),
      UnsafeUrlError,
    );
    expect(localhost.detail).toMatch(
      /^localhost:8787 resolves to (127\.0\.0\.1|::1), .*The only internal address allowed is the local engine at http:\/\/127\.0\.0\.1:8787\.$/,
    );
  });

  describe("local engine origins from the environment", () => {
    afterEach(() => {
      vi.unstubAllEnvs();
      resetEnvForTests();
    });
    const useEnv = (vars: Record<string, string | undefined>) => {
      for (const [k, v] of Object.entries(vars)) vi.stubEnv(k, v);
      resetEnvForTests();
    };

    it("uses http://127.0.0.1:${ORKESTR_ENGINE_PORT} when ORKESTR_API_URL is not loopback", async () => {
      useEnv({ ORKESTR_ENGINE_PORT: "9911", ORKESTR_API_URL: "https://api.orkestr.eu" });
      expect((await assertSafeBaseUrl("http://127.0.0.1:9911/v1", { resolver: noDns })).isLocalEngine).toBe(true);
      expect(
        (await rejectsWith(assertSafeBaseUrl("http://127.0.0.1:8787", { resolver: noDns }), UnsafeUrlError)).detail,
      ).toMatch(/local engine at http:\/\/127\.0\.0\.1:9911\./);
    });

    it("uses ORKESTR_API_URL's origin when it points at loopback", async () => {
      useEnv({ ORKESTR_ENGINE_PORT: "9911", ORKESTR_API_URL: "http://localhost:7777/v1" });
      expect((await assertSafeBaseUrl("http://localhost:7777", { resolver: noDns })).isLocalEngine).toBe(true);
      expect((await assertSafeBaseUrl("http://127.0.0.1:9911", { resolver: noDns })).isLocalEngine).toBe(true);
      expect((await rejectsWith(assertSafeBaseUrl("http://localhost:7778"), UnsafeUrlError)).code).toBe(
        "private_address",
      );
    });

    it("defaults to the embedded engine at 127.0.0.1:8787", async () => {
      useEnv({ ORKESTR_ENGINE_PORT: undefined, ORKESTR_API_URL: undefined });
      expect((await assertSafeBaseUrl("http://127.0.0.1:8787", { resolver: noDns })).isLocalEngine).toBe(true);
    });
  });
});

describe("guardedFetch", () => {
  let server: http.Server;
  let port: number;
  let connections = 0;
  const requests: { method: string; url: string; host: string; body: string }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        requests.push({ method: req.method ?? "", url: req.url ?? "", host: req.headers.host ?? "", body });
        if (req.url === "/v1/sandboxes/limits") {
          res.writeHead(200, { "content-type": "application/json" });
          return res.end(JSON.stringify({ plan: "payg", regions: ["eu-central"] }));
        }
        if (req.url === "/echo") {
          res.writeHead(200, { "content-type": "application/json", "set-cookie": ["a=1", "b=2"] });
          return res.end(JSON.stringify({ method: req.method, body, type: req.headers["content-type"] ?? null }));
        }
        if (req.url === "/redirect") {
          res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" });
          return res.end();
        }
        if (req.url === "/empty") {
          res.writeHead(204);
          return res.end();
        }
        if (req.url === "/stream") {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write("data: first\n\n");
          // The second chunk only comes when the client asks for it: proves the body is not buffered.
          const t = setInterval(() => res.write("data: tick\n\n"), 50);
          res.on("close", () => clearInterval(t));
          return;
        }
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ detail: "nope", code: "not_found" }));
      });
    });
    server.on("connection", () => connections++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("refuses internal IP literals before connecting", async () => {
    const before = connections;
    const f = createGuardedFetch({ resolver: noDns });
    for (const url of [
      `http://127.0.0.1:${port}/echo`,
      `http://[::1]:${port}/`,
      "http://10.0.0.1/",
      "http://169.254.169.254/latest/meta-data",
    ]) {
      const err = await rejectsWith(f(url), TypeError);
      expect(err.message).toBe("fetch failed");
      expect(err.cause).toBeInstanceOf(PrivateAddressRefused);
      expect((err.cause as PrivateAddressRefused).code).toBe("EPRIVATE_ADDRESS");
    }
    expect(connections).toBe(before);
  });

  it("refuses a name that re-resolves to an internal address at connect time (DNS rebinding)", async () => {
    let n = 0;
    const rebinding: Resolver = async () => [{ address: n++ === 0 ? "93.184.216.34" : "127.0.0.1", family: 4 }];
    const safe = await assertSafeBaseUrl(`https://rebind.example:${port}`, {
      localEngineOrigins: [ENGINE],
      resolver: rebinding,
    });
    expect(safe.addresses).toEqual(["93.184.216.34"]);
    const before = connections;
    const err = await rejectsWith(
      createGuardedFetch({ resolver: rebinding })(`http://rebind.example:${port}/echo`),
      TypeError,
    );
    expect(err.cause).toBeInstanceOf(PrivateAddressRefused);
    expect((err.cause as Error).message).toBe(
      "refused to connect to rebind.example: it resolves to 127.0.0.1, a loopback address",
    );
    expect(connections).toBe(before);
  });

  it("refuses this machine's own public addresses at connect time, as literals and behind names", async () => {
    const own = new Set(["93.184.216.34"]);
    const f = createGuardedFetch({ resolver: table({ "me.example": ["93.184.216.34"] }), ownAddresses: own });
    const before = connections;
    for (const url of ["http://93.184.216.34/", "http://[::ffff:5db8:d822]/", "http://me.example/"]) {
      const err = await rejectsWith(f(url), TypeError);
      expect(err.cause, url).toBeInstanceOf(PrivateAddressRefused);
      expect((err.cause as Error).message, url).toMatch(
        /an address of this machine \(one of its own network interfaces\)$/,
      );
    }
    expect(connections).toBe(before);
  });

  it("refuses when any resolved address is internal, and reports names that do not resolve", async () => {
    const f = createGuardedFetch({ resolver: table({ "split.example": ["93.184.216.34", "10.0.0.1"] }) });
    expect((await rejectsWith(f("http://split.example/"), TypeError)).cause).toBeInstanceOf(PrivateAddressRefused);
    const missing = await rejectsWith(f("http://missing.example/"), TypeError);
    expect((missing.cause as { code?: string }).code).toBe("ENOTFOUND");
  });

  describe("as a fetch (a test policy lets it reach 127.0.0.1 under a made-up name)", () => {
    const resolver = table({ "api.test": ["127.0.0.1"] });
    const f = createGuardedFetch({ resolver, isAllowed: (a) => a === "127.0.0.1" });
    const base = () => `http://api.test:${port}`;

    it("sends method, headers and body, and returns status, headers and body", async () => {
      const res = await f(`${base()}/echo`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ a: 1 }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(res.headers.get("set-cookie")).toBe("a=1, b=2");
      expect(await res.json()).toEqual({ method: "POST", body: '{"a":1}', type: "application/json" });
      expect(requests.at(-1)?.host).toBe(`api.test:${port}`);
      expect(resolver.calls).toContain("api.test");
    });

    it("streams request bodies from a ReadableStream", async () => {
      const chunks = ["hello ", "world"];
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = chunks.shift();
          if (next === undefined) controller.close();
          else controller.enqueue(new TextEncoder().encode(next));
        },
      });
      const res = await f(`${base()}/echo`, { method: "PUT", body, duplex: "half" } as RequestInit);
      expect(((await res.json()) as { body: string }).body).toBe("hello world");
    });

    it("does not follow redirects", async () => {
      const res = await f(`${base()}/redirect`, { redirect: "manual" });
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toBe("http://169.254.169.254/latest/meta-data");
    });

    it("gives a null body for 204", async () => {
      const res = await f(`${base()}/empty`, { method: "DELETE" });
      expect(res.status).toBe(204);
      expect(res.body).toBeNull();
    });

    it("streams response bodies unbuffered and stops when aborted", async () => {
      const controller = new AbortController();
      const res = await f(`${base()}/stream`, { signal: controller.signal });
      const reader = res.body!.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toContain("data: first");
      const second = await reader.read();
      expect(new TextDecoder().decode(second.value)).toContain("data: tick");
      controller.abort();
      await expect(reader.read()).rejects.toBeDefined();
    });

    it("rejects with the abort reason when aborted before the response", async () => {
      const controller = new AbortController();
      controller.abort(new DOMException("stop", "AbortError"));
      await expect(f(`${base()}/echo`, { signal: controller.signal })).rejects.toMatchObject({ name: "AbortError" });
    });

    it("serves the orkestr client", async () => {
      const client = createOrkestrClient({ baseUrl: base(), token: "ork_test_token_123", fetch: f, maxRetries: 0 });
      const limits = await client.sandboxes.limits();
      expect(limits.plan).toBe("payg");
      expect(limits.regions).toEqual(["eu-central"]);
    });
  });
});
