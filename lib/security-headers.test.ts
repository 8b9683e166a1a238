import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, isHttps, newNonce, securityHeaders } from "./security-headers";

const directives = (csp: string) =>
  new Map(csp.split("; ").map((d) => [d.split(" ")[0], d.split(" ").slice(1).join(" ")]));

describe("security headers", () => {
  it("builds a nonce-based CSP with the preview domains as frame sources", () => {
    const csp = directives(contentSecurityPolicy("abc123=="));
    expect(csp.get("script-src")).toBe("'self' 'nonce-abc123==' 'strict-dynamic'");
    expect(csp.get("frame-src")).toBe("http://*.sbx.localhost:* https://*.sbx.orkestr.run");
    expect(csp.get("frame-ancestors")).toBe("'none'");
    expect(csp.get("base-uri")).toBe("'none'");
    expect(csp.get("object-src")).toBe("'none'");
    expect(csp.get("connect-src")).toBe("'self'");
  });

  it("allows eval only in development", () => {
    expect(contentSecurityPolicy("n0nce")).not.toContain("unsafe-eval");
    expect(contentSecurityPolicy("n0nce", { dev: true })).toContain("'unsafe-eval'");
  });

  it("refuses a nonce that could break out of the directive", () => {
    expect(() => contentSecurityPolicy("x'; script-src *")).toThrow();
  });

  it("makes fresh 128-bit nonces", () => {
    const a = newNonce();
    expect(Buffer.from(a, "base64")).toHaveLength(16);
    expect(newNonce()).not.toBe(a);
  });

  it("sends HSTS only over HTTPS, trusting the first forwarded hop", () => {
    expect(securityHeaders("csp", { https: false })).not.toHaveProperty("Strict-Transport-Security");
    expect(securityHeaders("csp", { https: true })["Strict-Transport-Security"]).toMatch(/^max-age=\d+/);
    expect(isHttps("https", "http:")).toBe(true);
    expect(isHttps("https, http", "http:")).toBe(true);
    expect(isHttps("http", "https:")).toBe(false);
    expect(isHttps(null, "https:")).toBe(true);
    expect(isHttps(null, "http:")).toBe(false);
  });
});
