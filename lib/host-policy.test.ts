import { describe, expect, it } from "vitest";
import { hostAllowed, originAllowed, parseHostPolicy, splitHost } from "./host-policy";

const policy = (env: Record<string, string>) => {
  const { policy: p, issues } = parseHostPolicy(env);
  expect(issues).toEqual([]);
  return p;
};

describe("the host policy", () => {
  it("splits Host values strictly: a name or IPv4, or a bracketed IPv6, and a port", () => {
    expect(splitHost("LocalHost:03000")).toEqual({ hostname: "localhost", port: "3000" });
    expect(splitHost("[::1]:3000")).toEqual({ hostname: "[::1]", port: "3000" });
    expect(splitHost("baton.example.com")).toEqual({ hostname: "baton.example.com", port: null });
    for (const bad of [
      "",
      "a@localhost:3000",
      "localhost:3000/x",
      "localhost:0",
      "localhost:70000",
      "::1",
      "local host",
      "localhost.",
      "-x.example",
    ])
      expect(splitHost(bad), bad).toBeNull();
  });

  it("defaults to the loopback names on PORT; BATON_URL replaces them; BATON_ALLOWED_HOSTS adds to either", () => {
    const defaults = policy({ PORT: "4000" });
    expect(defaults.summary).toBe("localhost:4000, 127.0.0.1:4000, [::1]:4000");
    expect(hostAllowed("127.0.0.1:4000", defaults)).toBe(true);
    expect(hostAllowed("127.0.0.1:3000", defaults)).toBe(false);
    expect(hostAllowed("evil.example:4000", defaults)).toBe(false);

    const url = policy({
      BATON_URL: "https://Baton.Example.com",
      BATON_ALLOWED_HOSTS: " 192.168.1.20:3000 , http://intranet:8080 ,,",
    });
    expect(url.summary).toBe("baton.example.com, 192.168.1.20:3000, intranet:8080");
    expect(hostAllowed("baton.example.com", url)).toBe(true);
    expect(hostAllowed("localhost:3000", url)).toBe(false);
    expect(hostAllowed("192.168.1.20:3000", url)).toBe(true);
    expect(hostAllowed("192.168.1.20:3001", url)).toBe(false);
  });

  it("matches Origins by scheme (when given), name and port", () => {
    const p = policy({ BATON_URL: "https://baton.example.com", BATON_ALLOWED_HOSTS: "http://intranet:8080, lan-name" });
    expect(originAllowed("https://baton.example.com", p)).toBe(true);
    expect(originAllowed("http://baton.example.com", p)).toBe(false);
    expect(originAllowed("http://intranet:8080", p)).toBe(true);
    expect(originAllowed("http://intranet:8081", p)).toBe(false);
    expect(originAllowed("https://lan-name:9443", p)).toBe(true);
    for (const bad of [null, "", "null", "file://", "https://baton.example.com.evil.example", "javascript:alert(1)"])
      expect(originAllowed(bad, p), String(bad)).toBe(false);
    const loopback = policy({});
    expect(originAllowed("http://localhost:3000", loopback)).toBe(true);
    expect(originAllowed("http://localhost", loopback)).toBe(false);
  });

  it("reports what is wrong with the variables", () => {
    expect(parseHostPolicy({ BATON_URL: "baton.example.com" }).issues).toEqual([
      expect.stringContaining("BATON_URL must be an absolute http(s) URL"),
    ]);
    expect(parseHostPolicy({ BATON_URL: "https://baton.example.com/console" }).issues).toEqual([
      expect.stringContaining("origin only"),
    ]);
    expect(parseHostPolicy({ BATON_URL: "ftp://baton.example.com" }).issues).toEqual([
      expect.stringContaining("http or https"),
    ]);
    expect(parseHostPolicy({ BATON_ALLOWED_HOSTS: "ok, not ok" }).issues).toEqual([
      expect.stringContaining('"not ok"'),
    ]);
  });
});
