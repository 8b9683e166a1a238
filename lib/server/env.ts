import "server-only";
import path from "node:path";
import { z } from "zod";
import { parseHostPolicy, type HostPolicy } from "../host-policy";

// The console's server environment: validated once with zod, normalised into the shape the rest of
// lib/server needs (absolute data dir, a resolved database target, the decoded secret bytes). Values
// that may hold credentials (DATABASE_URL, BATON_SECRET) are never echoed back in error messages.

export type DatabaseTarget = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string };

export interface ServerEnv {
  NODE_ENV: "development" | "production" | "test";
  PORT: number;
  /** Absolute path of the data directory (SQLite file, generated secret.key). */
  BATON_DATA_DIR: string;
  /** Decoded BATON_SECRET bytes (≥ 32), or undefined to use `${BATON_DATA_DIR}/secret.key`. */
  BATON_SECRET: Buffer | undefined;
  ORKESTR_ENGINE_PORT: number;
  /** Base URL of the orkestr API, without trailing slash and without `/v1`. */
  ORKESTR_API_URL: string;
  /** Where the console's own database lives, derived from DATABASE_URL. */
  database: DatabaseTarget;
  /** BATON_URL as an origin (`https://baton.example.com`), or undefined (loopback defaults). */
  BATON_URL: string | undefined;
  /** The Host names served and the origins trusted: BATON_URL (or loopback:PORT) plus BATON_ALLOWED_HOSTS. */
  hostPolicy: HostPolicy;
  /**
   * How many reverse proxies in front of Baton append to X-Forwarded-For (0: none, the socket's
   * address is the client's). See lib/server/front-door.ts.
   */
  BATON_TRUSTED_PROXIES: number;
}

export class EnvError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid server environment:\n${issues.map((i) => `  - ${i}`).join("\n")}`);
    this.name = "EnvError";
  }
}

const MIN_SECRET_BYTES = 32;
const DEFAULT_ENGINE_PORT = 8787;

// Unset and empty variables mean the same thing: "use the default".
const optionalString = z.preprocess(
  (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
  z.string().trim().optional(),
);

const port = (name: string, fallback: number) =>
  z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z
      .string()
      .trim()
      .regex(/^\d+$/, { error: (iss) => `${name} must be a port number 1-65535 (got ${JSON.stringify(iss.input)})` })
      .transform(Number)
      .refine((n) => n >= 1 && n <= 65535, { error: `${name} must be a port number 1-65535` })
      .optional()
      .transform((n) => n ?? fallback),
  );

const RawEnv = z.object({
  NODE_ENV: z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z
      .enum(["development", "production", "test"], {
        error: (iss) => `NODE_ENV must be development, production or test (got ${JSON.stringify(iss.input)})`,
      })
      .default("development"),
  ),
  PORT: port("PORT", 3000),
  ORKESTR_ENGINE_PORT: port("ORKESTR_ENGINE_PORT", DEFAULT_ENGINE_PORT),
  BATON_DATA_DIR: optionalString,
  BATON_SECRET: optionalString,
  ORKESTR_API_URL: optionalString,
  DATABASE_URL: optionalString,
  BATON_URL: optionalString,
  BATON_ALLOWED_HOSTS: optionalString,
  BATON_TRUSTED_PROXIES: optionalString,
});

/**
 * Decodes BATON_SECRET: 64+ hex characters are hex, otherwise strict (round-tripping) base64 or
 * base64url of at least 32 bytes, otherwise the raw UTF-8 bytes. Returns null when shorter than 32.
 */
export function decodeSecret(raw: string): Buffer | null {
  if (/^[0-9a-fA-F]+$/.test(raw) && raw.length % 2 === 0 && raw.length >= MIN_SECRET_BYTES * 2) {
    return Buffer.from(raw, "hex");
  }
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)) {
    const unpadded = raw.replace(/=+$/, "");
    const std = unpadded.replace(/-/g, "+").replace(/_/g, "/");
    const bytes = Buffer.from(std, "base64");
    const roundTrip = bytes.toString("base64").replace(/=+$/, "");
    if (roundTrip === std && bytes.length >= MIN_SECRET_BYTES) return bytes;
  }
  const utf8 = Buffer.from(raw, "utf8");
  return utf8.length >= MIN_SECRET_BYTES ? utf8 : null;
}

function parseDatabaseUrl(raw: string | undefined, dataDir: string, issues: string[]): DatabaseTarget {
  const fallback: DatabaseTarget = { kind: "sqlite", path: path.join(dataDir, "baton.sqlite") };
  if (raw === undefined) return fallback;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(raw)?.[1]?.toLowerCase();
  if (scheme === "postgres" || scheme === "postgresql") {
    try {
      const u = new URL(raw);
      if (!u.hostname && !u.searchParams.get("host")) throw new Error("no host");
    } catch {
      issues.push("DATABASE_URL is not a valid postgres:// URL (expected postgres://user:password@host:port/database)");
      return fallback;
    }
    return { kind: "postgres", url: raw };
  }
  if (scheme === "sqlite") {
    // sqlite:relative/path, sqlite:/abs/path, sqlite:///abs/path, sqlite::memory:
    let p = raw.slice("sqlite:".length);
    if (p.startsWith("//")) p = p.slice(2);
    if (p === "") return fallback;
    if (p === ":memory:") return { kind: "sqlite", path: p };
    return { kind: "sqlite", path: path.resolve(/* turbopackIgnore: true */ p) };
  }
  issues.push(
    `DATABASE_URL must start with postgres://, postgresql:// or sqlite: (got a ${scheme ? `"${scheme}:"` : "scheme-less"} URL)`,
  );
  return fallback;
}

function parseApiUrl(raw: string | undefined, enginePort: number, issues: string[]): string {
  if (raw === undefined) return `http://127.0.0.1:${enginePort}`;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    issues.push(`ORKESTR_API_URL must be an absolute http(s) URL (got ${JSON.stringify(raw)})`);
    return `http://127.0.0.1:${enginePort}`;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    issues.push(`ORKESTR_API_URL must use http or https (got "${u.protocol}")`);
  }
  if (u.username || u.password) issues.push("ORKESTR_API_URL must not contain credentials");
  if (u.search || u.hash) issues.push("ORKESTR_API_URL must not have a query string or fragment");
  return `${u.origin}${u.pathname}`.replace(/\/+$/, "");
}

/** Parses an environment without caching: pure, for tests and tools. Throws EnvError. */
export function parseEnv(source: Record<string, string | undefined> = process.env): ServerEnv {
  const parsed = RawEnv.safeParse(source);
  if (!parsed.success) {
    throw new EnvError(
      parsed.error.issues.map((i) => {
        const key = i.path.join(".");
        return i.message.startsWith(key) ? i.message : `${key}: ${i.message}`;
      }),
    );
  }
  const raw = parsed.data;
  const issues: string[] = [];

  // A runtime location, not a source path: keep Next's output tracing from including the project.
  const dataDir = path.resolve(/* turbopackIgnore: true */ raw.BATON_DATA_DIR ?? "./data");

  let secret: Buffer | undefined;
  if (raw.BATON_SECRET !== undefined) {
    const decoded = decodeSecret(raw.BATON_SECRET);
    if (decoded === null) {
      issues.push(
        `BATON_SECRET must hold at least ${MIN_SECRET_BYTES} bytes: 64+ hex characters, 43+ base64 characters or ` +
          `${MIN_SECRET_BYTES}+ raw characters (got ${Buffer.byteLength(raw.BATON_SECRET)} bytes). ` +
          "Generate one with: openssl rand -base64 32",
      );
    } else {
      secret = decoded;
    }
  }

  const database = parseDatabaseUrl(raw.DATABASE_URL, dataDir, issues);
  const apiUrl = parseApiUrl(raw.ORKESTR_API_URL, raw.ORKESTR_ENGINE_PORT, issues);
  const hosts = parseHostPolicy({
    BATON_URL: raw.BATON_URL,
    BATON_ALLOWED_HOSTS: raw.BATON_ALLOWED_HOSTS,
    PORT: String(raw.PORT),
  });
  issues.push(...hosts.issues);
  const trustedProxies =
    raw.BATON_TRUSTED_PROXIES === undefined
      ? 0
      : /^\d{1,2}$/.test(raw.BATON_TRUSTED_PROXIES)
        ? Number(raw.BATON_TRUSTED_PROXIES)
        : null;
  if (trustedProxies === null) {
    issues.push(
      `BATON_TRUSTED_PROXIES must be a number of proxy hops, 0-99 (got ${JSON.stringify(raw.BATON_TRUSTED_PROXIES)})`,
    );
  }

  if (issues.length > 0) throw new EnvError(issues);
  return {
    NODE_ENV: raw.NODE_ENV,
    PORT: raw.PORT,
    BATON_DATA_DIR: dataDir,
    BATON_SECRET: secret,
    ORKESTR_ENGINE_PORT: raw.ORKESTR_ENGINE_PORT,
    ORKESTR_API_URL: apiUrl,
    database,
    BATON_URL: raw.BATON_URL === undefined ? undefined : new URL(raw.BATON_URL).origin,
    hostPolicy: hosts.policy,
    BATON_TRUSTED_PROXIES: trustedProxies ?? 0,
  };
}

let cached: ServerEnv | undefined;

/** The process's server environment, parsed once on first use. Throws EnvError when invalid. */
export function getEnv(): ServerEnv {
  cached ??= parseEnv(process.env);
  return cached;
}

/** Test helper: forget the parsed environment so the next getEnv() re-reads process.env. */
export function resetEnvForTests(): void {
  cached = undefined;
}
