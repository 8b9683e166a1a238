import http from "node:http";
import type { AddressInfo, LookupFunction } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Resolver } from "../../lib/net/address.js";
import {
  connectPlan,
  ownAddresses,
  parseWebhookAllow,
  receiverUrlProblem,
  REFUSED_CODE,
} from "../src/services/webhook-guard.js";

/**
 * The webhook address guard as functions (no engine). Host names resolve through injected
 * resolvers; the only connections go to a server this file runs on 127.0.0.1.
 */

type Lookup = (
  hostname: string,
  options: object,
  cb: (err: NodeJS.ErrnoException | null, address: unknown, family?: number) => void,
) => void;

function lookupOnce(
  lookup: LookupFunction,
  hostname: string,
  options: object = {},
): Promise<{ err: NodeJS.ErrnoException | null; address: unknown }> {
  return new Promise((resolve) =>
    (lookup as unknown as Lookup)(hostname, options, (err, address) => resolve({ err, address })),
  );
}

describe("ORKESTR_ENGINE_WEBHOOK_ALLOW", () => {
  it("takes http(s) receiver prefixes and bare origins, normalised, and refuses anything else", () => {
    expect(parseWebhookAllow("")).toEqual([]);
    expect(
      parseWebhookAllow(
        " http://127.0.0.1:3000/api/hooks/ , HTTPS://Hooks.Example.com:443/ ,http://[::1]:80,http://10.0.0.5:9000/in",
      ),
    ).toEqual([
      "http://127.0.0.1:3000/api/hooks/",
      "https://hooks.example.com",
      "http://[::1]",
      "http://10.0.0.5:9000/in/",
    ]);
    for (const bad of [
      "127.0.0.1:3000",
      "ftp://127.0.0.1",
      "http://u:p@127.0.0.1",
      "http://127.0.0.1/?x=1",
      "http://127.0.0.1/api/hooks/?",
      "http://127.0.0.1/api/hooks/#x",
      "http://127.0.0.1/api/%68ooks/",
      "http://127.0.0.1/api//hooks/",
      "http://127.0.0.1/api/hooks;x/",
    ]) {
      expect(() => parseWebhookAllow(bad), bad).toThrow(/ORKESTR_ENGINE_WEBHOOK_ALLOW/);
    }
  });
});

describe("a receiver prefix admits its own paths only (the console's /api/hooks/, not /login)", () => {
  const allow = parseWebhookAllow("http://127.0.0.1:3000/api/hooks/");
  it("accepts plain paths below the prefix", () => {
    for (const ok of ["http://127.0.0.1:3000/api/hooks/rcv_01ABC", "http://127.0.0.1:3000/api/hooks/a/b-c_d.e~f"]) {
      expect(receiverUrlProblem(ok, allow), ok).toBeNull();
      expect(connectPlan(new URL(ok), allow), ok).toEqual({ refused: null, lookup: undefined });
    }
  });

  it("refuses the rest of the origin, however it is spelled, when saved and when each attempt connects", () => {
    for (const bad of [
      "http://127.0.0.1:3000/login",
      "http://127.0.0.1:3000/api/setup",
      "http://127.0.0.1:3000/",
      "http://127.0.0.1:3000/api/hooks/",
      "http://127.0.0.1:3000/api/hooks",
      "http://127.0.0.1:3000/api/hooksx/1",
      // Dot segments, literal or encoded, and backslashes are resolved by the URL parser first...
      "http://127.0.0.1:3000/api/hooks/../../login",
      "http://127.0.0.1:3000/api/hooks/%2e%2e/%2E%2E/api/setup",
      "http://127.0.0.1:3000/api/hooks/..\\..\\login",
      // ...and what a server might decode later is not admitted at all.
      "http://127.0.0.1:3000/api/hooks/..%2f..%2flogin",
      "http://127.0.0.1:3000/api/hooks/..%5C..%5Clogin",
      "http://127.0.0.1:3000/api/hooks/%252e%252e%252flogin",
      "http://127.0.0.1:3000/api/hooks//login",
      "http://127.0.0.1:3000/api/hooks/x;/../../login",
      // A query or user info is no part of a receiver's URL.
      "http://127.0.0.1:3000/api/hooks/x?next=/login",
      "http://127.0.0.1:3000/api/hooks/x#/login",
      "http://admin@127.0.0.1:3000/api/hooks/x",
      // Another port or scheme is another origin.
      "http://127.0.0.1:3001/api/hooks/x",
      "https://127.0.0.1:3000/api/hooks/x",
    ]) {
      expect(receiverUrlProblem(bad, allow), bad).toMatch(/loopback|https/);
      expect(connectPlan(new URL(bad), allow).refused, bad).toMatch(/^refused: /);
    }
    expect(receiverUrlProblem("http://127.0.0.1:3000/login", allow)).toMatch(
      /on http:\/\/127\.0\.0\.1:3000 only URLs under http:\/\/127\.0\.0\.1:3000\/api\/hooks\/ are allowed$/,
    );
  });

  it("a plain-http webhook saved under a wider list is refused at delivery once the list no longer admits it", () => {
    const plan = connectPlan(new URL("http://baton.test/login"), parseWebhookAllow("http://baton.test/api/hooks/"));
    expect(plan.refused).toMatch(/^refused: http:\/\/baton\.test\/login is plain http:\/\/ and no allowed receiver/);
    expect(
      connectPlan(new URL("http://baton.test/api/hooks/r1"), parseWebhookAllow("http://baton.test/api/hooks/")),
    ).toEqual({
      refused: null,
      lookup: undefined,
    });
  });

  it("a bare origin still allows its whole origin (an operator's explicit choice)", () => {
    const wide = parseWebhookAllow("http://127.0.0.1:3000");
    expect(receiverUrlProblem("http://127.0.0.1:3000/login", wide)).toBeNull();
  });
});

describe("receiverUrlProblem (create and PATCH)", () => {
  const allow = ["http://127.0.0.1:3000"];
  it("accepts https:// host names and public literals, and allowed origins over http", () => {
    for (const ok of [
      "https://hooks.example.com/x",
      "https://8.8.8.8/x",
      "https://[2606:4700::1111]/x",
      "http://127.0.0.1:3000/api/hooks",
      "https://localhost/x",
    ]) {
      expect(receiverUrlProblem(ok, allow), ok).toBeNull();
    }
  });
  it("refuses internal literals (saying which range) and plain http elsewhere", () => {
    expect(receiverUrlProblem("http://127.0.0.1:3001/x", allow)).toMatch(
      /^127\.0\.0\.1 is a loopback address: webhooks may only reach public addresses/,
    );
    expect(receiverUrlProblem("https://[::ffff:10.0.0.5]/x", allow)).toMatch(
      /is a private \(RFC 1918\) address \(IPv4-mapped 10\.0\.0\.5\)/,
    );
    expect(receiverUrlProblem("https://[64:ff9b::a9fe:a9fe]/x", allow)).toMatch(
      /cloud metadata address \(NAT64 169\.254\.169\.254\)/,
    );
    expect(receiverUrlProblem("http://hooks.example.com/x", allow)).toMatch(/must use https:\/\//);
    expect(receiverUrlProblem("gopher://hooks.example.com/x", allow)).toMatch(/must be https/);
    expect(receiverUrlProblem("nope", allow)).toMatch(/absolute https/);
    // Without the allow list the console's own origin is just loopback.
    expect(receiverUrlProblem("http://127.0.0.1:3000/api/hooks", [])).toMatch(/loopback/);
  });
});

describe("connectPlan (every delivery attempt)", () => {
  it("refuses internal literals before connecting, lets allowed origins and public literals through", () => {
    expect(connectPlan(new URL("https://10.0.0.5/x"), []).refused).toBe(
      "refused: 10.0.0.5 is a private (RFC 1918) address; webhooks may only reach public addresses, so that a webhook cannot be used to reach services inside this machine's network, so no request was made (the engine's operator can allow an internal receiver with ORKESTR_ENGINE_WEBHOOK_ALLOW)",
    );
    expect(connectPlan(new URL("https://[::1]:8443/x"), []).refused).toMatch(
      /^refused: \[::1\] is the IPv6 loopback address/,
    );
    expect(connectPlan(new URL("http://127.0.0.1:3000/x"), ["http://127.0.0.1:3000"])).toEqual({
      refused: null,
      lookup: undefined,
    });
    expect(connectPlan(new URL("https://8.8.8.8/x"), [])).toEqual({ refused: null, lookup: undefined });
  });

  it("refuses this machine's own addresses, public ones included (they reach what listens on 0.0.0.0 here)", async () => {
    const own = new Set(["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]);
    expect(connectPlan(new URL("https://93.184.216.34/x"), [], { ownAddresses: own }).refused).toMatch(
      /^refused: 93\.184\.216\.34 is an address of this machine/,
    );
    expect(connectPlan(new URL("https://[::ffff:93.184.216.34]/x"), [], { ownAddresses: own }).refused).toMatch(
      /an address of this machine/,
    );
    expect(
      connectPlan(new URL("https://[2606:2800:0220:0001:0248:1893:25c8:1946]/x"), [], { ownAddresses: own }).refused,
    ).toMatch(/an address of this machine/);
    expect(receiverUrlProblem("https://93.184.216.34/x", [], { ownAddresses: own })).toMatch(
      /^93\.184\.216\.34 is an address of this machine/,
    );
    expect(connectPlan(new URL("https://93.184.216.35/x"), [], { ownAddresses: own }).refused).toBeNull();
    const plan = connectPlan(new URL("https://me.example/x"), [], {
      ownAddresses: own,
      resolver: async () => [{ address: "93.184.216.34", family: 4 }],
    });
    const r = await lookupOnce((plan as { lookup: LookupFunction }).lookup, "me.example");
    expect(r.err?.message).toMatch(/^refused: me\.example resolves to 93\.184\.216\.34, an address of this machine/);
    // The real interface list holds at least loopback, in canonical form.
    expect(ownAddresses().has("127.0.0.1")).toBe(true);
  });

  it("resolves names at connect time: every answer must be public, so a name rebound to an internal address is refused", async () => {
    // A rebinding name: public when first asked (say, when the webhook was saved), then loopback.
    const answers = [
      [{ address: "93.184.216.34", family: 4 }],
      [{ address: "127.0.0.1", family: 4 }],
      [
        { address: "93.184.216.34", family: 4 },
        { address: "169.254.169.254", family: 4 },
      ],
    ];
    let asked = 0;
    const resolver: Resolver = async () => answers[asked++]!;
    const plan = connectPlan(new URL("https://rebind.example/x"), [], { resolver });
    expect(plan.refused).toBeNull();
    const lookup = (plan as { lookup: LookupFunction }).lookup;
    const first = await lookupOnce(lookup, "rebind.example");
    expect(first).toEqual({ err: null, address: "93.184.216.34" });
    const second = await lookupOnce(lookup, "rebind.example");
    expect(second.err?.code).toBe(REFUSED_CODE);
    expect(second.err?.message).toMatch(/^refused: rebind\.example resolves to 127\.0\.0\.1, a loopback address;/);
    // One internal address among public ones is enough (the connection may pick any of them).
    const third = await lookupOnce(lookup, "rebind.example", { all: true });
    expect(third.err?.message).toMatch(/resolves to 169\.254\.169\.254, the link-local cloud metadata address/);
    expect(asked).toBe(3);
  });

  describe("through node:http, as deliveries use it", () => {
    let server: http.Server;
    let port = 0;
    let hits = 0;
    beforeAll(async () => {
      server = http.createServer((_req, res) => {
        hits++;
        res.end("hi");
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    const post = (url: URL, lookup: LookupFunction | undefined) =>
      new Promise<{ status?: number; error?: NodeJS.ErrnoException }>((resolve) => {
        const req = http.request(url, { method: "POST", agent: false, lookup }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode }));
        });
        req.on("error", (error: NodeJS.ErrnoException) => resolve({ error }));
        req.end("{}");
      });

    it("the lookup decides what the socket connects to: loopback refused with no connection, allowed when the resolver says public", async () => {
      const url = new URL(`http://receiver.test:${port}/hook`);
      // The plan of the https:// twin (plain http is refused outright unless allowed): the lookup is
      // the same for both schemes, and this test server speaks http.
      const refused = connectPlan(new URL(`https://receiver.test:${port}/hook`), [], {
        resolver: async () => [{ address: "127.0.0.1", family: 4 }],
      });
      const r1 = await post(url, (refused as { lookup: LookupFunction }).lookup);
      expect(r1.error?.code).toBe(REFUSED_CODE);
      expect(hits).toBe(0);
      // The same request with a lookup that vouches for the address connects: the hook is what stopped it.
      const passthrough: LookupFunction = ((
        _h: string,
        o: { all?: boolean },
        cb: (e: null, a: unknown, f?: number) => void,
      ) =>
        o.all
          ? cb(null, [{ address: "127.0.0.1", family: 4 }])
          : cb(null, "127.0.0.1", 4)) as unknown as LookupFunction;
      const r2 = await post(url, passthrough);
      expect(r2.status).toBe(200);
      expect(hits).toBe(1);
    });
  });
});
