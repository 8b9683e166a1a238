import "server-only";
import http from "node:http";
import type { AddressInfo, LookupFunction } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectPlan, receiverUrlProblem } from "../../engine/src/services/webhook-guard";
import { assertSafeBaseUrl, createGuardedFetch, PrivateAddressRefused, UnsafeUrlError } from "../server/ssrf";
import type { Resolver } from "./address";

// The URLs the well-kept request-filtering libraries test themselves with (ssrf-req-filter's
// test/fixtures/blockedUrls.js and allowedUrls.js, request-filtering-agent's test file), run through
// each of Baton's guards: the console's base-URL check and guarded fetch, and the engine's webhook
// check at save and at connect. Wildcard-DNS names resolve, through a table, to what they answer
// in the wild; nothing leaves this machine, and the only server is a counter on 127.0.0.1.

const OWN = new Set(["127.0.0.1", "::1"]);

const WILD: Record<string, string[]> = {
  localhost: ["127.0.0.1", "::1"],
  "localtest.me": ["127.0.0.1"],
  "127.0.0.1.nip.io": ["127.0.0.1"],
  "customer1.app.localhost.my.company.127.0.0.1.nip.io": ["127.0.0.1"],
  "mail.ebc.apple.com": ["127.0.0.6"],
  "spoofed.burpcollaborator.net": ["127.0.0.1"],
  "169.254.169.254.xip.io": ["169.254.169.254"],
  "169.254.169.254.nip.io": ["169.254.169.254"],
  "1ynrnhl.xip.io": ["169.254.169.254"],
  "www.owasp.org.1ynrnhl.xip.io": ["169.254.169.254"],
  "metadata.nicob.net": ["169.254.169.254"],
  // Answers a public and a private address, the second time round only the private one.
  "a.127.0.0.1.1time.10.0.0.1.1time.repeat.rebind.network": ["93.184.216.34", "10.0.0.1"],
  "google.com": ["142.250.185.78", "2a00:1450:4001:80b::200e"],
  "github.com": ["140.82.121.4"],
  "cloudflare.com": ["104.16.132.229", "2606:4700::6810:84e5"],
  "postman-echo.com": ["3.210.96.218"],
  "facebook.com": ["157.240.0.35"],
};

const wild: Resolver = async (host) => {
  const list = WILD[host.toLowerCase().replace(/\.$/, "")];
  if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return list.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

const BLOCKED = [
  // ssrf-req-filter
  "http://127.0.0.1:80",
  "http://0.0.0.0:443",
  "http://localhost:22",
  "http://[::]:80",
  "http://0000::1:80",
  "http://localtest.me",
  "http://customer1.app.localhost.my.company.127.0.0.1.nip.io",
  "http://mail.ebc.apple.com",
  "http://spoofed.burpcollaborator.net",
  "http://127.127.127.127",
  "http://127.0.1.3",
  "http://127.0.0.0",
  "http://0177.0.0.1",
  "http://2130706433",
  "http://3232235521",
  "http://3232235777",
  "http://[0:0:0:0:0:ffff:127.0.0.1]",
  "http://0",
  "http://127.1",
  "http://127.0.1",
  "http://127.1.1.1:80@127.2.2.2:80",
  "http://127.1.1.1:80@@127.2.2.2:80",
  "http://127.1.1.1:80:@@127.2.2.2:80",
  "http://127.1.1.1:80#@127.2.2.2:80",
  "http://169.254.169.254",
  "http://169.254.169.254.xip.io",
  "http://1ynrnhl.xip.io",
  "http://www.owasp.org.1ynrnhl.xip.io",
  "http://425.510.425.510",
  "http://2852039166",
  "http://7147006462",
  "http://0xA9.0xFE.0xA9.0xFE",
  "http://0xA9FEA9FE",
  "http://0x41414141A9FEA9FE",
  "http://0251.0376.0251.0376",
  "http://0251.00376.000251.0000376",
  "http://169.254.169.254/latest/meta-data/hostname",
  "https://a.127.0.0.1.1time.10.0.0.1.1time.repeat.rebind.network",
  "http://metadata.nicob.net",
  "http://localhost:+11211aaa",
  "http://localhost:00011211aaaa",
  // request-filtering-agent
  "http://[::1]",
  "http://[0:0:0:0:0:0:0:1]",
  "http://[::ffff:127.0.0.1]",
  "http://[::ffff:7f00:1]",
  "http://0177.00.01",
  "http://0177.01",
  "http://017700000001",
  "http://0x7f.0x0.0x0.0x1",
  "http://0x7f.0x0.0x1",
  "http://0x7f.0x1",
  "http://0x7f000001",
  "http://127.0.0.1.nip.io",
  "https://localhost",
  "http://169.254.169.254.nip.io",
  "http://A.com@127.0.0.1",
  // and a few of our own spellings
  "http://127.0.0.1.",
  "http://localhost.",
  "http://LOCALHOST",
  "http://①②⑦.0.0.1",
  "http://127。0。0。1",
  "http://[::127.0.0.1]",
  "http://[64:ff9b::a9fe:a9fe]",
  "http://[2002:a9fe:a9fe::1]",
  "http://[fe80::1%25eth0]",
];

const ALLOWED = [
  "https://google.com",
  "https://github.com",
  "https://facebook.com",
  "https://cloudflare.com",
  "https://postman-echo.com/get",
];

/** Refused: not a URL at all, or refused as an internal/own address. */
const refusedOrInvalid = /^(invalid_url|private_address)$/;

describe("the request-filtering libraries' cases, against Baton's guards", () => {
  let server: http.Server;
  let port = 0;
  let connections = 0;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end("reached"));
    server.on("connection", () => connections++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it.each(BLOCKED)("%s is refused by the console's base-URL check", async (url) => {
    const err = await assertSafeBaseUrl(url.replace(/^http:/, "https:"), {
      localEngineOrigins: [],
      resolver: wild,
      ownAddresses: OWN,
    }).then(
      (ok) => ok,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnsafeUrlError);
    expect((err as UnsafeUrlError).code).toMatch(refusedOrInvalid);
  });

  it.each(BLOCKED)("%s is refused by the console's guarded fetch before any connection", async (url) => {
    // Aimed at the counting server's port: a guard that let it through would connect there.
    let target: string;
    try {
      const u = new URL(url);
      u.port = String(port);
      target = u.href;
    } catch {
      return expect(() => new URL(url)).toThrow(TypeError);
    }
    const before = connections;
    const f = createGuardedFetch({ resolver: wild, ownAddresses: OWN });
    const err = await f(target).then(
      () => null,
      (e: unknown) => e as TypeError,
    );
    expect(err?.message).toBe("fetch failed");
    expect(err?.cause).toBeInstanceOf(PrivateAddressRefused);
    expect(connections).toBe(before);
  });

  it.each(BLOCKED)("%s is refused by the engine's webhook guard, at save or at connect", async (raw) => {
    const url = raw.replace(/^http:/, "https:");
    const problem = receiverUrlProblem(url, [], { ownAddresses: OWN });
    if (problem) return expect(problem).toMatch(/^(url must be|.* (is|resolves to) .*: webhooks may only)/);
    // A host name passes the save check; its connect-time lookup must refuse every answer.
    const plan = connectPlan(new URL(url), [], { ownAddresses: OWN, resolver: wild });
    if (plan.refused !== null) return expect(plan.refused).toMatch(/^refused: /);
    const lookup = plan.lookup as unknown as (
      h: string,
      o: object,
      cb: (err: NodeJS.ErrnoException | null) => void,
    ) => void;
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      lookup(new URL(url).hostname, { all: true }, resolve),
    );
    expect(err?.code).toBe("EPRIVATE_ADDRESS");
  });

  it.each(ALLOWED)("%s is allowed by every guard", async (url) => {
    const safe = await assertSafeBaseUrl(url, { localEngineOrigins: [], resolver: wild, ownAddresses: OWN });
    expect(safe.isLocalEngine).toBe(false);
    expect(receiverUrlProblem(url, [], { ownAddresses: OWN })).toBeNull();
    const plan = connectPlan(new URL(url), [], { ownAddresses: OWN, resolver: wild });
    expect(plan.refused).toBeNull();
    const answer = await new Promise<{ err: unknown; address: unknown }>((resolve) =>
      (plan as { lookup: LookupFunction }).lookup(new URL(url).hostname, { all: true }, (err, address) =>
        resolve({ err, address }),
      ),
    );
    expect(answer.err).toBeNull();
    expect(answer.address).toEqual(WILD[new URL(url).hostname]!.map((a) => expect.objectContaining({ address: a })));
  });
});
