import "server-only";
import fs from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { clearFaults, injectFault, startEngine, type EngineHandle } from "../../engine/test/helpers/engine";
import type { FetchLike } from "../orkestr/core";
import { OrkestrConnectionError } from "../orkestr/errors";
import { CryptoError, decrypt } from "./crypto";
import { getConnectionSecret, upsertConnection } from "./db/connections";
import { DbConflictError, DbNotFoundError } from "./db/errors";
import { migrateToLatest, type Db } from "./db/index";
import { testBackends, type TestDatabase } from "./db/test-backends";
import { createUser } from "./db/users";
import { resetEnvForTests } from "./env";
import { PrivateAddressRefused, type Resolver } from "./ssrf";
import {
  activeConnection,
  checkActiveConnection,
  connectLocalEngine,
  listUserConnections,
  normalizeToken,
  orkestrFor,
  removeConnection,
  replaceToken,
  saveConnection,
  setActive,
  TOKEN_FORMAT,
  VaultError,
} from "./tokens";
import { rejectsWith } from "../../engine/test/helpers/async";

// The token vault on each database backend, against a real local engine that shares its data dir
// with the "console": BATON_DATA_DIR is the engine's, ORKESTR_API_URL its origin, so the engine is
// the configured local engine exactly as on the embedded default.

let e: EngineHandle;
let readToken: string;

/** A fetch that must not be called (format and name errors are found before any request). */
function forbiddenFetch(): FetchLike & { calls: number } {
  const f = Object.assign(
    async () => {
      f.calls++;
      throw new Error("no request expected");
    },
    { calls: 0 },
  );
  return f;
}

beforeAll(async () => {
  e = await startEngine();
  readToken = await e.mint(["sandboxes:read"]);
  vi.stubEnv("BATON_DATA_DIR", e.dataDir!);
  vi.stubEnv("BATON_SECRET", "vault-test-secret-".padEnd(48, "x"));
  vi.stubEnv("ORKESTR_API_URL", e.origin);
  vi.stubEnv("ORKESTR_ENGINE_PORT", undefined);
  vi.stubEnv("DATABASE_URL", undefined);
  resetEnvForTests();
}, 60_000);

afterAll(async () => {
  vi.unstubAllEnvs();
  resetEnvForTests();
  await e?.stop();
});

afterEach(async () => {
  await clearFaults(e);
});

describe("token format", () => {
  it("accepts both generations (C4), trimmed", () => {
    expect(normalizeToken("ork_abcdEFGH1234_-xy")).toBe("ork_abcdEFGH1234_-xy");
    expect(normalizeToken("  sp_live_abcdefgh1234\n")).toBe("sp_live_abcdefgh1234");
    expect(TOKEN_FORMAT.test(e.token)).toBe(true);
  });

  it.each([
    ["empty", ""],
    ["too short", "ork_abc"],
    ["another vendor's", "ghp_abcdefghijklmnop"],
    ["a Bearer header", "Bearer ork_abcdefghijklmnop"],
    ["inner space", "ork_abcd efghijklmnop"],
    ["punctuation", "ork_abcdefgh!jklmnop"],
    ["sp_test", "sp_test_abcdefghijklmnop"],
    ["no prefix", "abcdefghijklmnopqrstuvwxyz"],
  ])("refuses %s without echoing it", (_what, token) => {
    let err: unknown;
    try {
      normalizeToken(token);
    } catch (x) {
      err = x;
    }
    expect(err).toBeInstanceOf(VaultError);
    const v = err as VaultError;
    expect(v.code).toBe("invalid_token_format");
    expect(v.status).toBe(422);
    expect(v.field).toBe("token");
    if (token.trim()) expect(v.detail).not.toContain(token.trim());
  });
});

describe.each(testBackends)("token vault on $name", (backend) => {
  let tdb: TestDatabase;
  let db: Db;
  let n = 0;
  const newUser = async () =>
    (await createUser(db, { email: `vault${++n}-${Date.now()}@example.com`, name: "Vault", passwordHash: "scrypt$x" }))
      .id;
  const rawRows = (userId: string) =>
    db.selectFrom("orkestr_connections").selectAll().where("user_id", "=", userId).execute();

  beforeAll(async () => {
    tdb = await backend.open();
    db = tdb.db;
    await migrateToLatest(db);
  });

  afterAll(async () => {
    await tdb?.close();
  });

  it("stores a checked connection encrypted: neither the database nor the answer holds the token", async () => {
    const userId = await newUser();
    const saved = await saveConnection({ userId, name: "Local", baseUrl: `${e.origin}/v1/`, token: e.token }, { db });
    expect(saved.connection).toMatchObject({
      name: "Local",
      baseUrl: e.origin,
      tokenHint: `ork_…${e.token.slice(-4)}`,
      isActive: true,
      isLocalEngine: true,
      lastError: null,
    });
    expect(saved.connection.lastCheckedAt).not.toBeNull();
    expect(saved.check).toMatchObject({ ok: true, plan: "payg", engine: { kind: "local" } });
    const secretPart = e.token.slice("ork_".length);
    expect(JSON.stringify(saved)).not.toContain(secretPart);

    const rows = await rawRows(userId);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.token_ciphertext).toMatch(/^v1:/);
    const encodings = [
      e.token,
      secretPart,
      Buffer.from(e.token).toString("base64"),
      Buffer.from(e.token).toString("base64url"),
      Buffer.from(e.token).toString("hex"),
    ];
    for (const value of Object.values(row)) {
      for (const enc of encodings) expect(String(value)).not.toContain(enc);
    }
    if (backend.name === "sqlite") {
      // The whole database on disk, write-ahead log included.
      for (const file of [tdb.location, `${tdb.location}-wal`]) {
        if (!fs.existsSync(file)) continue;
        const bytes = fs.readFileSync(file);
        expect(bytes.includes(Buffer.from(secretPart)), file).toBe(false);
      }
    }
    // …but it decrypts, with its row's AAD.
    const secret = await getConnectionSecret(db, userId);
    expect(decrypt(secret!.ciphertext, { aad: secret!.aad })).toBe(e.token);
  });

  it("gives the active connection without its token", async () => {
    const userId = await newUser();
    expect(await activeConnection(userId, { db })).toBeNull();
    const saved = await saveConnection({ userId, name: "Engine", baseUrl: e.origin, token: e.token }, { db });
    const active = await activeConnection(userId, { db });
    expect(active).toEqual({
      id: saved.connection.id,
      name: "Engine",
      baseUrl: e.origin,
      tokenHint: saved.connection.tokenHint,
      isLocalEngine: true,
      teamId: null,
    });
    const views = await listUserConnections(userId, { db });
    expect(JSON.stringify([active, views])).not.toContain(e.token.slice(4));
  });

  it("orkestrFor gives a working client for the active connection, end to end", async () => {
    const userId = await newUser();
    await saveConnection({ userId, name: "Engine", baseUrl: e.origin, token: e.token }, { db });
    const client = await orkestrFor(userId, { db });
    expect(client.core.baseUrl).toBe(`${e.origin}/v1`);
    const sandbox = await client.sandboxes.create({ template: "python-3.12" });
    try {
      const page = await client.sandboxes.list();
      expect(page.items.map((s) => s.id)).toContain(sandbox.id);
    } finally {
      await client.sandboxes.terminate(sandbox.id);
    }
  });

  it("orkestrFor without a connection throws no_connection with a way out", async () => {
    const userId = await newUser();
    const err = await rejectsWith(orkestrFor(userId, { db }), VaultError);
    expect(err.code).toBe("no_connection");
    expect(err.status).toBe(409);
    expect(err.detail).toBe(
      "You have no orkestr connection yet. Add one in Settings → Connections (base URL and token), or use the local engine.",
    );
    expect(await checkActiveConnection(userId, { db })).toBeNull();
  });

  it("binds each ciphertext to its row: another row's AAD does not decrypt it", async () => {
    const userId = await newUser();
    const a = await saveConnection({ userId, name: "A", baseUrl: e.origin, token: e.token }, { db });
    const b = await saveConnection({ userId, name: "B", baseUrl: e.origin, token: readToken }, { db });
    const sa = (await getConnectionSecret(db, userId, a.connection.id))!;
    const sb = (await getConnectionSecret(db, userId, b.connection.id))!;
    expect(sa.aad).not.toBe(sb.aad);
    expect(decrypt(sa.ciphertext, { aad: sa.aad })).toBe(e.token);
    expect(decrypt(sb.ciphertext, { aad: sb.aad })).toBe(readToken);
    expect(() => decrypt(sa.ciphertext, { aad: sb.aad })).toThrow(CryptoError);
    expect(() => decrypt(sb.ciphertext, { aad: sa.aad })).toThrow(CryptoError);

    // Moving a ciphertext to another row (a tampered or restored-wrong database) makes it unreadable.
    await db
      .updateTable("orkestr_connections")
      .set({ token_ciphertext: sb.ciphertext })
      .where("id", "=", a.connection.id)
      .execute();
    const err = await rejectsWith(orkestrFor(userId, { db, connectionId: a.connection.id }), VaultError);
    expect(err.code).toBe("token_unreadable");
    expect(err.detail).toMatch(
      /^The token of the connection "A" can no longer be decrypted: .*Replace the token in Settings → Connections\.$/,
    );
    expect(err.cause).toBeInstanceOf(CryptoError);
  });

  it("saving a bad token stores nothing", async () => {
    const userId = await newUser();
    const err = await rejectsWith(
      saveConnection({ userId, name: "Bad", baseUrl: e.origin, token: "ork_neverMintedByThisEngine_0000" }, { db }),
      VaultError,
    );
    expect(err).toMatchObject({
      code: "bad_token",
      status: 422,
      field: "token",
      detail: "The token was refused (401). Check it was copied whole and not revoked.",
    });
    expect(await rawRows(userId)).toHaveLength(0);
  });

  it("saving a wrong URL, an internal address or a malformed token stores nothing and says why", async () => {
    const userId = await newUser();
    const notOrkestr = await rejectsWith(
      saveConnection({ userId, name: "X", baseUrl: `${e.origin}/api`, token: e.token }, { db }),
      VaultError,
    );
    expect(notOrkestr).toMatchObject({ code: "not_orkestr", status: 422, field: "base_url" });
    expect(notOrkestr.detail).toMatch(/does not look like an orkestr v1 API/);

    const fetchSpy = forbiddenFetch();
    const internal = await rejectsWith(
      saveConnection(
        { userId, name: "X", baseUrl: "https://metadata.example", token: e.token },
        { db, fetch: fetchSpy, resolver: async () => [{ address: "169.254.169.254", family: 4 }] },
      ),
      VaultError,
    );
    expect(internal).toMatchObject({ code: "private_address", status: 422, field: "base_url" });
    expect(internal.detail).toMatch(
      /^metadata\.example resolves to 169\.254\.169\.254, the link-local cloud metadata address\./,
    );

    const loopback = await rejectsWith(
      saveConnection({ userId, name: "X", baseUrl: "http://127.0.0.1:1", token: e.token }, { db, fetch: fetchSpy }),
      VaultError,
    );
    expect(loopback.code).toBe("private_address");

    const plain = await rejectsWith(
      saveConnection({ userId, name: "X", baseUrl: "http://api.orkestr.eu", token: e.token }, { db, fetch: fetchSpy }),
      VaultError,
    );
    expect(plain.code).toBe("invalid_url");

    const format = await rejectsWith(
      saveConnection({ userId, name: "X", baseUrl: e.origin, token: "ork_short" }, { db, fetch: fetchSpy }),
      VaultError,
    );
    expect(format.code).toBe("invalid_token_format");

    const name = await rejectsWith(
      saveConnection({ userId, name: "   ", baseUrl: e.origin, token: e.token }, { db, fetch: fetchSpy }),
      VaultError,
    );
    expect(name).toMatchObject({ code: "invalid_name", field: "name" });

    expect(fetchSpy.calls).toBe(0);
    expect(await rawRows(userId)).toHaveLength(0);
  });

  it("refuses a second connection with the same name before checking anything", async () => {
    const userId = await newUser();
    await saveConnection({ userId, name: "Prod", baseUrl: e.origin, token: e.token }, { db });
    const fetchSpy = forbiddenFetch();
    const err = await rejectsWith(
      saveConnection({ userId, name: " Prod ", baseUrl: e.origin, token: readToken }, { db, fetch: fetchSpy }),
      DbConflictError,
    );
    expect(err.code).toBe("connection_name_taken");
    expect(fetchSpy.calls).toBe(0);
    expect(await rawRows(userId)).toHaveLength(1);
  });

  it("stores sp_live_ tokens (the 0.1.0a1 generation) too", async () => {
    const userId = await newUser();
    const limits: FetchLike = async () =>
      new Response(JSON.stringify({ plan: "payg", regions: ["fsn1"] }), {
        headers: { "content-type": "application/json" },
      });
    const saved = await saveConnection(
      { userId, name: "Legacy", baseUrl: e.origin, token: "sp_live_abcdefghijklmnop1234" },
      { db, fetch: limits },
    );
    expect(saved.connection.tokenHint).toBe("sp_…1234");
    const secret = (await getConnectionSecret(db, userId))!;
    expect(decrypt(secret.ciphertext, { aad: secret.aad })).toBe("sp_live_abcdefghijklmnop1234");
  });

  it("keeps one active connection through save, setActive and remove", async () => {
    const userId = await newUser();
    const a = await saveConnection({ userId, name: "A", baseUrl: e.origin, token: e.token }, { db });
    const b = await saveConnection({ userId, name: "B", baseUrl: e.origin, token: readToken }, { db });
    expect(a.connection.isActive).toBe(true); // the first one
    expect(b.connection.isActive).toBe(false); // not asked to
    expect((await activeConnection(userId, { db }))?.id).toBe(a.connection.id);

    const c = await saveConnection({ userId, name: "C", baseUrl: e.origin, token: e.token, activate: true }, { db });
    expect(c.connection.isActive).toBe(true);
    expect((await activeConnection(userId, { db }))?.id).toBe(c.connection.id);

    expect((await setActive(userId, b.connection.id, { db })).isActive).toBe(true);
    const views = await listUserConnections(userId, { db });
    expect(views.filter((v) => v.isActive).map((v) => v.name)).toEqual(["B"]);
    expect(views[0]?.name).toBe("B"); // active first

    // orkestrFor follows the active connection: B holds the read-only token.
    const seen: string[] = [];
    const recording: FetchLike = (url, init) => {
      seen.push(new Headers(init?.headers).get("authorization") ?? "");
      return fetch(url, init);
    };
    await (await orkestrFor(userId, { db, fetch: recording })).sandboxes.list();
    expect(seen).toEqual([`Bearer ${readToken}`]);

    // Removing the active one hands activity to the most recently updated of the others.
    const afterB = await removeConnection(userId, b.connection.id, { db });
    expect(afterB.active).not.toBeNull();
    expect([a.connection.id, c.connection.id]).toContain(afterB.active!.id);
    expect((await listUserConnections(userId, { db })).filter((v) => v.isActive)).toHaveLength(1);
    await removeConnection(userId, a.connection.id, { db });
    const last = await removeConnection(userId, c.connection.id, { db });
    expect(last.active).toBeNull();
    expect(await activeConnection(userId, { db })).toBeNull();
    await expect(removeConnection(userId, c.connection.id, { db })).rejects.toBeInstanceOf(DbNotFoundError);
  });

  it("does not let one user reach another's connection", async () => {
    const owner = await newUser();
    const other = await newUser();
    const saved = await saveConnection({ userId: owner, name: "Mine", baseUrl: e.origin, token: e.token }, { db });
    const id = saved.connection.id;
    await expect(orkestrFor(other, { db, connectionId: id })).rejects.toBeInstanceOf(DbNotFoundError);
    await expect(setActive(other, id, { db })).rejects.toBeInstanceOf(DbNotFoundError);
    await expect(removeConnection(other, id, { db })).rejects.toBeInstanceOf(DbNotFoundError);
    await expect(replaceToken({ userId: other, connectionId: id, token: readToken }, { db })).rejects.toBeInstanceOf(
      DbNotFoundError,
    );
    expect(await activeConnection(other, { db })).toBeNull();
    expect((await activeConnection(owner, { db }))?.id).toBe(id);
  });

  it("replaceToken checks the new token first and keeps the old one when it fails", async () => {
    const userId = await newUser();
    const saved = await saveConnection({ userId, name: "Eng", baseUrl: e.origin, token: e.token }, { db });
    const bad = await rejectsWith(
      replaceToken({ userId, connectionId: saved.connection.id, token: "ork_revokedOrNeverValid_1111" }, { db }),
      VaultError,
    );
    expect(bad.code).toBe("bad_token");
    expect((await activeConnection(userId, { db }))?.tokenHint).toBe(saved.connection.tokenHint);
    await (await orkestrFor(userId, { db })).sandboxes.list(); // the old token still works

    const replaced = await replaceToken({ userId, connectionId: saved.connection.id, token: readToken }, { db });
    expect(replaced.connection.id).toBe(saved.connection.id);
    expect(replaced.connection.tokenHint).toBe(`ork_…${readToken.slice(-4)}`);
    expect(replaced.check.ok).toBe(true);
    const secret = (await getConnectionSecret(db, userId))!;
    expect(decrypt(secret.ciphertext, { aad: secret.aad })).toBe(readToken);
  });

  it("checkActiveConnection records the outcome on the row", async () => {
    const userId = await newUser();
    await saveConnection({ userId, name: "Eng", baseUrl: e.origin, token: e.token }, { db });
    await injectFault(e, { kind: "error", status: 502, path: "^/v1/sandboxes/limits$", count: 1 });
    const down = await checkActiveConnection(userId, { db });
    expect(down?.check).toMatchObject({ ok: false, code: "upstream_error", status: 502 });
    expect(down?.connection.lastError).toMatch(/^upstream_error: The orkestr API at .* answered 502 Bad Gateway/);
    const up = await checkActiveConnection(userId, { db });
    expect(up?.check.ok).toBe(true);
    expect(up?.connection.lastError).toBeNull();
    expect(up?.connection.lastCheckedAt).not.toBeNull();
  });

  it("orkestrFor refuses stored URLs that are no longer allowed, at connect time", async () => {
    const userId = await newUser();
    // Rows written past the vault (an older version, a restored backup) are still guarded.
    const plain = await upsertConnection(db, {
      userId,
      name: "Plain",
      baseUrl: "http://api.example.test",
      token: "ork_abcdefghijklmnop",
    });
    const err = await rejectsWith(orkestrFor(userId, { db, connectionId: plain.id }), VaultError);
    expect(err.code).toBe("invalid_url");
    expect(err.detail).toMatch(/uses plain http .* Edit it to use https:\/\//);

    const internal = await upsertConnection(db, {
      userId,
      name: "Internal",
      baseUrl: "https://internal.example.test",
      token: "ork_abcdefghijklmnop",
    });
    const resolver: Resolver = async () => [{ address: "10.0.0.8", family: 4 }];
    const client = await orkestrFor(userId, { db, connectionId: internal.id, resolver, client: { maxRetries: 0 } });
    const failure = await rejectsWith(client.sandboxes.list(), OrkestrConnectionError);
    expect(failure.cause).toBeInstanceOf(TypeError);
    expect((failure.cause as Error).cause).toBeInstanceOf(PrivateAddressRefused);
  });

  it("connectLocalEngine mints, checks and saves the local engine as the active connection", async () => {
    const userId = await newUser();
    await saveConnection({ userId, name: "Other", baseUrl: e.origin, token: readToken }, { db });
    const first = await connectLocalEngine(userId, { db });
    expect(first.connection).toMatchObject({
      name: "Local engine",
      baseUrl: e.origin,
      isActive: true,
      isLocalEngine: true,
    });
    expect(first.check).toMatchObject({ ok: true, engine: { kind: "local" } });
    // A second click replaces the token of the same connection.
    const second = await connectLocalEngine(userId, { db });
    expect(second.connection.id).toBe(first.connection.id);
    expect(second.connection.tokenHint).not.toBe(first.connection.tokenHint);
    const views = await listUserConnections(userId, { db });
    expect(views.map((v) => v.name).sort()).toEqual(["Local engine", "Other"]);
    expect(views.find((v) => v.isActive)?.name).toBe("Local engine");
    // The minted token is read/write.
    const client = await orkestrFor(userId, { db });
    const sandbox = await client.sandboxes.create({ template: "python-3.12" });
    await client.sandboxes.terminate(sandbox.id);
  });
});
