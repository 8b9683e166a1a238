import "server-only";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { decodeSecret, EnvError, getEnv, parseEnv, resetEnvForTests } from "./env";

const HEX_SECRET = "ab".repeat(32);

function issuesOf(source: Record<string, string | undefined>): string[] {
  try {
    parseEnv(source);
  } catch (err) {
    expect(err).toBeInstanceOf(EnvError);
    return (err as EnvError).issues;
  }
  throw new Error("expected parseEnv to throw");
}

describe("parseEnv", () => {
  it("applies the defaults on an empty environment", () => {
    const env = parseEnv({});
    expect(env).toMatchObject({
      NODE_ENV: "development",
      PORT: 3000,
      ORKESTR_ENGINE_PORT: 8787,
      ORKESTR_API_URL: "http://127.0.0.1:8787",
      BATON_SECRET: undefined,
      BATON_DATA_DIR: path.resolve("./data"),
      database: { kind: "sqlite", path: path.resolve("./data/baton.sqlite") },
    });
  });

  it("treats empty strings as unset", () => {
    const env = parseEnv({ PORT: "", DATABASE_URL: " ", BATON_SECRET: "", NODE_ENV: "" });
    expect(env.PORT).toBe(3000);
    expect(env.database.kind).toBe("sqlite");
    expect(env.BATON_SECRET).toBeUndefined();
  });

  it("derives the SQLite path from BATON_DATA_DIR and the engine URL from ORKESTR_ENGINE_PORT", () => {
    const env = parseEnv({
      BATON_DATA_DIR: "/var/lib/baton",
      ORKESTR_ENGINE_PORT: "9999",
      PORT: "8080",
      NODE_ENV: "production",
    });
    expect(env.database).toEqual({ kind: "sqlite", path: "/var/lib/baton/baton.sqlite" });
    expect(env.ORKESTR_API_URL).toBe("http://127.0.0.1:9999");
    expect(env.PORT).toBe(8080);
    expect(env.NODE_ENV).toBe("production");
  });

  it("recognises postgres:// and postgresql:// URLs", () => {
    expect(parseEnv({ DATABASE_URL: "postgres://u:p@db:5432/baton" }).database).toEqual({
      kind: "postgres",
      url: "postgres://u:p@db:5432/baton",
    });
    expect(parseEnv({ DATABASE_URL: "postgresql://u@localhost/baton" }).database.kind).toBe("postgres");
  });

  it("accepts sqlite: paths, including sqlite:/// and :memory:", () => {
    expect(parseEnv({ DATABASE_URL: "sqlite:/tmp/x.sqlite" }).database).toEqual({
      kind: "sqlite",
      path: "/tmp/x.sqlite",
    });
    expect(parseEnv({ DATABASE_URL: "sqlite:///tmp/y.sqlite" }).database).toEqual({
      kind: "sqlite",
      path: "/tmp/y.sqlite",
    });
    expect(parseEnv({ DATABASE_URL: "sqlite:rel/z.sqlite" }).database).toEqual({
      kind: "sqlite",
      path: path.resolve("rel/z.sqlite"),
    });
    expect(parseEnv({ DATABASE_URL: "sqlite::memory:" }).database).toEqual({ kind: "sqlite", path: ":memory:" });
  });

  it("rejects other database schemes without echoing the URL", () => {
    const issues = issuesOf({ DATABASE_URL: "mysql://root:hunter2@db/baton" });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/DATABASE_URL must start with postgres:\/\//);
    expect(issues[0]).toContain('"mysql:"');
    expect(issues.join("\n")).not.toContain("hunter2");
  });

  it("rejects invalid ports with the variable's name", () => {
    expect(issuesOf({ PORT: "abc" })[0]).toMatch(/^PORT must be a port number/);
    expect(issuesOf({ PORT: "70000" })[0]).toMatch(/^PORT must be a port number/);
    expect(issuesOf({ ORKESTR_ENGINE_PORT: "-1" })[0]).toMatch(/^ORKESTR_ENGINE_PORT must be a port number/);
  });

  it("rejects an unknown NODE_ENV", () => {
    expect(issuesOf({ NODE_ENV: "staging" })[0]).toMatch(/^NODE_ENV must be development, production or test/);
  });

  it("collects every problem into one error", () => {
    const err = (() => {
      try {
        parseEnv({ PORT: "x", ORKESTR_API_URL: "ftp://example.com", BATON_SECRET: "short" });
      } catch (e) {
        return e as EnvError;
      }
    })();
    expect(err).toBeInstanceOf(EnvError);
    // zod-level issues are reported first; the derived checks run once those pass.
    expect(err?.message).toMatch(/^Invalid server environment:\n {2}- PORT/);
    const again = issuesOf({ ORKESTR_API_URL: "ftp://example.com", BATON_SECRET: "short" });
    expect(again).toHaveLength(2);
    expect(again.some((i) => i.startsWith("BATON_SECRET must hold at least 32 bytes"))).toBe(true);
    expect(again.some((i) => i.startsWith("ORKESTR_API_URL must use http or https"))).toBe(true);
  });

  it("normalises ORKESTR_API_URL and refuses credentials, queries and non-URLs", () => {
    expect(parseEnv({ ORKESTR_API_URL: "https://api.orkestr.eu/" }).ORKESTR_API_URL).toBe("https://api.orkestr.eu");
    expect(issuesOf({ ORKESTR_API_URL: "https://u:p@api.orkestr.eu" })[0]).toMatch(/credentials/);
    expect(issuesOf({ ORKESTR_API_URL: "https://api.orkestr.eu/?x=1" })[0]).toMatch(/query string/);
    expect(issuesOf({ ORKESTR_API_URL: "not a url" })[0]).toMatch(/absolute http\(s\) URL/);
  });

  it("reads BATON_URL, BATON_ALLOWED_HOSTS and BATON_TRUSTED_PROXIES (the front door's settings)", () => {
    const defaults = parseEnv({ PORT: "8080" });
    expect(defaults).toMatchObject({ BATON_URL: undefined, BATON_TRUSTED_PROXIES: 0 });
    expect(defaults.hostPolicy.summary).toBe("localhost:8080, 127.0.0.1:8080, [::1]:8080");
    const set = parseEnv({
      BATON_URL: "https://Baton.example.com/",
      BATON_ALLOWED_HOSTS: "lan-name",
      BATON_TRUSTED_PROXIES: "2",
    });
    expect(set).toMatchObject({ BATON_URL: "https://baton.example.com", BATON_TRUSTED_PROXIES: 2 });
    expect(set.hostPolicy.summary).toBe("baton.example.com, lan-name");
    expect(issuesOf({ BATON_URL: "baton.example.com", BATON_TRUSTED_PROXIES: "-1" })).toEqual([
      expect.stringMatching(/^BATON_URL must be an absolute http\(s\) URL/),
      'BATON_TRUSTED_PROXIES must be a number of proxy hops, 0-99 (got "-1")',
    ]);
  });

  it("never echoes a too-short BATON_SECRET", () => {
    const issues = issuesOf({ BATON_SECRET: "tiny-secret-value" });
    expect(issues.join()).not.toContain("tiny-secret-value");
    expect(issues[0]).toContain("got 17 bytes");
  });
});

describe("decodeSecret", () => {
  it("decodes hex, base64, base64url and raw secrets of at least 32 bytes", () => {
    const bytes = Buffer.alloc(32, 7);
    expect(decodeSecret(bytes.toString("hex"))).toEqual(bytes);
    expect(decodeSecret(bytes.toString("base64"))).toEqual(bytes);
    const b = Buffer.from(Array.from({ length: 48 }, (_, i) => 250 - i));
    expect(decodeSecret(b.toString("base64url"))).toEqual(b);
    expect(decodeSecret("correct horse battery staple, 32+")?.toString()).toBe("correct horse battery staple, 32+");
  });

  it("returns null below 32 bytes", () => {
    expect(decodeSecret("short")).toBeNull();
    expect(decodeSecret("x".repeat(31))).toBeNull();
  });

  it("prefers hex over base64 and raw for 64 hex characters", () => {
    expect(decodeSecret("ab".repeat(32))).toHaveLength(32);
  });
});

describe("getEnv", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    resetEnvForTests();
  });

  it("parses process.env once and re-reads it after resetEnvForTests()", () => {
    vi.stubEnv("PORT", "4000");
    vi.stubEnv("BATON_SECRET", HEX_SECRET);
    resetEnvForTests();
    const first = getEnv();
    expect(first.PORT).toBe(4000);
    expect(first.BATON_SECRET).toEqual(Buffer.from(HEX_SECRET, "hex"));
    vi.stubEnv("PORT", "5000");
    expect(getEnv()).toBe(first);
    resetEnvForTests();
    expect(getEnv().PORT).toBe(5000);
  });

  it("throws EnvError from getEnv() on a bad environment", () => {
    vi.stubEnv("PORT", "zero");
    resetEnvForTests();
    expect(() => getEnv()).toThrow(EnvError);
  });
});
