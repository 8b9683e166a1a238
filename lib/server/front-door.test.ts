import "server-only";
import { afterAll, describe, expect, it } from "vitest";
import { resolveClientAddress } from "./front-door";
import { clientIp, CLIENT_IP_HEADER, markFrontDoor } from "./request-info";

describe("resolveClientAddress (BATON_TRUSTED_PROXIES hops of X-Forwarded-For, rightmost-N)", () => {
  it("without trusted proxies, is the socket's address whatever X-Forwarded-For says", () => {
    expect(resolveClientAddress("203.0.113.5", "198.51.100.1", 0)).toBe("203.0.113.5");
    expect(resolveClientAddress("::ffff:127.0.0.1", undefined, 0)).toBe("127.0.0.1");
    expect(resolveClientAddress(undefined, "198.51.100.1", 0)).toBeNull();
  });

  it("with N proxies, is the entry each of them vouches for: N from the right of [...XFF, socket]", () => {
    // client → proxy A (appends client) → Baton. The client's own "1.1.1.1" is ignored.
    expect(resolveClientAddress("10.0.0.2", "1.1.1.1, 203.0.113.5", 1)).toBe("203.0.113.5");
    // client → CDN (appends client) → nginx (appends CDN) → Baton.
    expect(resolveClientAddress("10.0.0.2", "1.1.1.1, 203.0.113.5, 198.51.100.9", 2)).toBe("203.0.113.5");
    // Repeated headers count as one list.
    expect(resolveClientAddress("10.0.0.2", ["1.1.1.1", "203.0.113.5"], 1)).toBe("203.0.113.5");
    expect(resolveClientAddress("10.0.0.2", "2001:db8::1", 1)).toBe("2001:db8::1");
  });

  it("with fewer hops than configured, or garbage at the trusted hop, falls back toward the proxy's own address", () => {
    expect(resolveClientAddress("10.0.0.2", undefined, 1)).toBe("10.0.0.2");
    expect(resolveClientAddress("10.0.0.2", "203.0.113.5", 3)).toBe("203.0.113.5");
    expect(resolveClientAddress("10.0.0.2", "1.1.1.1, not-an-ip", 1)).toBe("10.0.0.2");
  });
});

describe("clientIp", () => {
  afterAll(() => markFrontDoor(false));

  it("reads only the front door's header, and only in a process that has a front door", () => {
    const headers = new Headers({
      [CLIENT_IP_HEADER]: "::ffff:192.0.2.1",
      "x-forwarded-for": "198.51.100.1",
      "x-real-ip": "198.51.100.2",
    });
    markFrontDoor(false);
    expect(clientIp(headers)).toBeNull();
    markFrontDoor(true);
    expect(clientIp(headers)).toBe("192.0.2.1");
    expect(clientIp(new Headers({ "x-forwarded-for": "198.51.100.1" }))).toBeNull();
    expect(clientIp(new Headers({ [CLIENT_IP_HEADER]: "not an address" }))).toBeNull();
  });
});
