import "server-only";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, vi } from "vitest";
import { hashPassword } from "../../lib/server/crypto";
import { closeDb, getMigratedDb, type Db } from "../../lib/server/db/index";
import { createTeamWithOwner, addMember, slugify, type Role } from "../../lib/server/db/teams";
import type { TestBackend, TestDatabase } from "../../lib/server/db/test-backends";
import { createUser, type User } from "../../lib/server/db/users";
import { resetEnvForTests } from "../../lib/server/env";
import { CLIENT_IP_HEADER, markFrontDoor } from "../../lib/server/request-info";
import { encodeSessionJwt, SESSION_COOKIE } from "../../lib/server/session-cookie";
import { createSession } from "../../lib/server/db/sessions";

// The console's server code under test against a real database: the process-wide getMigratedDb()
// (what route handlers use) is pointed at a fresh database of the given backend, with a fixed secret.

export const ORIGIN = "http://baton.test";
export const PASSWORD = "correct horse battery staple";
/** The client address the request() helper's requests come from (as the front door writes it). */
export const CLIENT_IP = "192.0.2.10";

let passwordHash: Promise<string> | undefined;

export function useConsoleDb(backend: TestBackend): { db(): Db } {
  let t: TestDatabase;
  let db: Db;
  let dataDir: string;
  beforeAll(async () => {
    t = await backend.open();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-console-test-"));
    vi.stubEnv("BATON_DATA_DIR", dataDir);
    vi.stubEnv("BATON_SECRET", "c".repeat(48));
    vi.stubEnv("DATABASE_URL", t.url);
    // The console under test is served as http://baton.test (lib/host-policy.ts), and its requests
    // come through the front door, which writes the client's address (lib/server/front-door.ts).
    vi.stubEnv("BATON_URL", ORIGIN);
    vi.stubEnv("BATON_ALLOWED_HOSTS", "");
    markFrontDoor(true);
    resetEnvForTests();
    db = await getMigratedDb();
  });
  afterAll(async () => {
    await closeDb();
    await t.close();
    vi.unstubAllEnvs();
    markFrontDoor(false);
    resetEnvForTests();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return { db: () => db };
}

let seq = 0;
export const uniq = (p: string) => `${p}-${++seq}-${Math.random().toString(36).slice(2, 7)}`;

/** A user with PASSWORD and, unless role is null, a team where they have `role` (an owner is made too). */
export async function makeUser(db: Db, role: Role | null = "owner"): Promise<{ user: User; teamId: string | null }> {
  passwordHash ??= hashPassword(PASSWORD);
  const user = await createUser(db, {
    email: `${uniq("user")}@example.com`,
    name: "Test User",
    passwordHash: await passwordHash,
  });
  if (role === null) return { user, teamId: null };
  if (role === "owner") {
    const { team } = await createTeamWithOwner(db, { name: "Team", slug: slugify(uniq("team")), ownerId: user.id });
    return { user, teamId: team.id };
  }
  const owner = await createUser(db, { email: `${uniq("owner")}@example.com`, passwordHash: null });
  const { team } = await createTeamWithOwner(db, { name: "Team", slug: slugify(uniq("team")), ownerId: owner.id });
  await addMember(db, { teamId: team.id, userId: user.id, role });
  return { user, teamId: team.id };
}

/** A session row for the user and the Cookie header carrying its next-auth JWT. */
export async function sessionCookie(
  db: Db,
  userId: string,
  opts: { ttlMs?: number; now?: number } = {},
): Promise<{ cookie: string; token: string; sessionId: string }> {
  const { token, session } = await createSession(db, { userId, ttlMs: opts.ttlMs, now: opts.now });
  return { cookie: `${SESSION_COOKIE}=${await encodeSessionJwt(token)}`, token, sessionId: session.id };
}

export interface RequestInit2 {
  method?: string;
  cookie?: string;
  headers?: Record<string, string>;
  body?: string | object;
}

/**
 * A request as a same-origin browser page sends it (Origin and Sec-Fetch-Site) and the front door
 * passes it on (the client's address in CLIENT_IP_HEADER), unless overridden.
 */
export function request(pathAndQuery: string, init: RequestInit2 = {}): Request {
  const method = init.method ?? "GET";
  const headers = new Headers({ host: "baton.test", [CLIENT_IP_HEADER]: CLIENT_IP, "user-agent": "vitest" });
  if (method !== "GET" && method !== "HEAD") {
    headers.set("origin", ORIGIN);
    headers.set("sec-fetch-site", "same-origin");
  }
  if (init.cookie) headers.set("cookie", init.cookie);
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
    headers.set("content-type", "application/json");
  }
  for (const [k, v] of Object.entries(init.headers ?? {})) {
    if (v === "") headers.delete(k);
    else headers.set(k, v);
  }
  return new Request(`${ORIGIN}${pathAndQuery}`, { method, headers, body });
}

export const noParams = { params: Promise.resolve({}) };

export async function jsonOf(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

/** The Set-Cookie values of a response as a Cookie request header (name=value pairs only). */
export function cookieHeaderFrom(res: Response): string {
  return res.headers
    .getSetCookie()
    .map((c) => c.split(";", 1)[0]!)
    .join("; ");
}
