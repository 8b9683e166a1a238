import Database from "better-sqlite3";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildEngine, type Engine } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { openDb } from "../../src/store/db.js";
import { mintToken } from "../../src/store/tokens.js";

/**
 * The idempotency table keeps a created resource's response for 24 h so a retry gets it again.
 * Secrets shown once (a webhook's secret, a sandbox's preview_auth_token) must not sit in that
 * table in the clear: the test reads the SQLite file itself, as anyone holding a copy could. A
 * replay still returns the stored response, secret included (the contract), also after a restart;
 * once the key file is gone it answers a clear 409 instead.
 */
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-idem-"));
const root = path.join(dataDir, "engine");
let engine: Engine;
let token = "";

async function boot(): Promise<Engine> {
  const e = await buildEngine(
    loadConfig({
      PATH: process.env.PATH,
      BATON_DATA_DIR: dataDir,
      ORKESTR_ENGINE_LOG: "silent",
      ORKESTR_ENGINE_CHECK_RESPONSES: "1",
      ORKESTR_ENGINE_POOL_SIZE: "0",
    }),
  );
  await e.app.ready();
  return e;
}

async function post(url: string, body: unknown, key: string) {
  const r = await engine.app.inject({
    method: "POST",
    url,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": key },
    payload: JSON.stringify(body),
  });
  return { status: r.statusCode, headers: r.headers, body: JSON.parse(r.body) };
}

/** Everything the idempotency table holds, read from the file by a connection of its own. */
function idempotencyRows(): string {
  const db = new Database(path.join(root, "engine.sqlite"), { readonly: true });
  try {
    return JSON.stringify(db.prepare("SELECT * FROM idempotency").all());
  } finally {
    db.close();
  }
}

/** The database's bytes on disk (main file and write-ahead log), as a copy of them would show. */
function databaseBytes(): string {
  return ["engine.sqlite", "engine.sqlite-wal"]
    .map((f) => path.join(root, f))
    .filter((f) => fs.existsSync(f))
    .map((f) => fs.readFileSync(f).toString("latin1"))
    .join("");
}

beforeAll(async () => {
  engine = await boot();
  token = mintToken(engine.ctx.db, ["sandboxes:read", "sandboxes:write"]).token;
});
afterAll(async () => {
  await engine?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("secrets in stored idempotent responses", () => {
  let webhook: Record<string, unknown>;

  it("a webhook's secret is not in the idempotency table; a replay returns it all the same", async () => {
    const first = await post("/v1/webhooks", { url: "https://hooks.example.com/in" }, "wh-key-1");
    expect(first.status).toBe(201);
    webhook = first.body;
    const secret = webhook.secret as string;
    expect(secret).toMatch(/^whsec_/);

    const rows = idempotencyRows();
    expect(rows).toContain(webhook.id as string);
    expect(rows).not.toContain(secret);
    expect(rows).not.toContain(secret.slice("whsec_".length));

    const replay = await post("/v1/webhooks", { url: "https://hooks.example.com/in" }, "wh-key-1");
    expect(replay.status).toBe(201);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.body).toEqual(webhook);
    expect(JSON.stringify(replay.body)).toBe(JSON.stringify(webhook));
  });

  it("a sandbox's preview_auth_token is nowhere in the database file; a replay returns it", async () => {
    const body = { template: "debian-12", network: "restricted", preview_auth: true };
    const first = await post("/v1/sandboxes", body, "sbx-key-1");
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const previewToken = first.body.preview_auth_token as string;
    expect(previewToken).toMatch(/^pvt_/);

    expect(idempotencyRows()).not.toContain(previewToken);
    // Elsewhere only its hash is kept: not one copy of the token in the file or its log.
    expect(databaseBytes()).not.toContain(previewToken);

    const replay = await post("/v1/sandboxes", body, "sbx-key-1");
    expect(replay.status).toBe(201);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.body.id).toBe(first.body.id);
    expect(replay.body.preview_auth_token).toBe(previewToken);
    const del = await engine.app.inject({
      method: "DELETE",
      url: `/v1/sandboxes/${first.body.id}`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(del.statusCode).toBe(204);
  });

  it("a replay after a restart still returns the secret; without the key file it is a clear 409", async () => {
    await engine.close();
    engine = await boot();
    const again = await post("/v1/webhooks", { url: "https://hooks.example.com/in" }, "wh-key-1");
    expect(again.status).toBe(201);
    expect(again.body).toEqual(webhook);

    await engine.close();
    fs.rmSync(path.join(root, "idempotency.key"));
    engine = await boot();
    expect(fs.statSync(path.join(root, "idempotency.key")).mode & 0o777).toBe(0o600);
    const lost = await post("/v1/webhooks", { url: "https://hooks.example.com/in" }, "wh-key-1");
    expect(lost.status).toBe(409);
    expect(lost.body).toMatchObject({ code: "idempotent_replay_unavailable", resource_id: webhook.id });
    expect(lost.body.detail).toMatch(/rotate its secret/);
    // Nothing was created twice.
    const list = await engine.app.inject({
      method: "GET",
      url: "/v1/webhooks",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(JSON.parse(list.body)).toHaveLength(1);
  });
});

describe("upgrading a database that stored secrets in the clear", () => {
  it("drops the stored responses that hold a secret and keeps the others", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-idem-upgrade-"));
    try {
      // A database as the release before this one left it: no sealed column, secrets in bodies.
      let db = openDb(dir);
      const version = db.pragma("user_version", { simple: true }) as number;
      db.exec("ALTER TABLE idempotency DROP COLUMN sealed");
      db.pragma(`user_version = ${version - 1}`);
      const insert = db.prepare(
        "INSERT INTO idempotency(token_id, route, key, status, body, created_at) VALUES ('tok_1', ?, ?, 201, ?, ?)",
      );
      insert.run("POST /v1/webhooks", "a", JSON.stringify({ id: "wh_1", secret: "whsec_old" }), Date.now());
      insert.run("POST /v1/sandboxes", "b", JSON.stringify({ id: "sbx_1", preview_auth_token: "pvt_old" }), Date.now());
      insert.run("POST /v1/sandboxes", "c", JSON.stringify({ id: "sbx_2", preview_auth_token: null }), Date.now());
      insert.run("POST /v1/volumes", "d", JSON.stringify({ id: "vol_1" }), Date.now());
      db.close();

      db = openDb(dir);
      const rows = db.prepare("SELECT key, sealed FROM idempotency ORDER BY key").all();
      db.close();
      expect(rows).toEqual([
        { key: "c", sealed: null },
        { key: "d", sealed: null },
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
