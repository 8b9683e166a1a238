import "server-only";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startEngine, type EngineHandle } from "../../engine/test/helpers/engine";
import { checkConnection } from "./connection-check";
import { resetEnvForTests } from "./env";
import {
  bootstrapSecretPath,
  engineAccountFor,
  isLocalEngineAvailable,
  LocalEngineError,
  localEngineOrigin,
  localEngineOrigins,
  localEngineStatus,
  mintLocalEngineToken,
  revokeLocalEngineToken,
} from "./local-engine";
import { rejectsWith } from "../../engine/test/helpers/async";

// The local engine helpers against a real engine that shares its data dir with the "console"
// (BATON_DATA_DIR = the engine's dataDir), plus the ways it can be missing.

let e: EngineHandle;
const tmpDirs: string[] = [];

function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-local-engine-"));
  tmpDirs.push(dir);
  return dir;
}

function useEnv(vars: Record<string, string | undefined>): void {
  vi.unstubAllEnvs();
  vi.stubEnv("BATON_SECRET", "x".repeat(40));
  vi.stubEnv("DATABASE_URL", undefined);
  vi.stubEnv("ORKESTR_ENGINE_PORT", undefined);
  vi.stubEnv("ORKESTR_API_URL", undefined);
  for (const [k, v] of Object.entries(vars)) vi.stubEnv(k, v);
  resetEnvForTests();
}

async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  e = await startEngine();
}, 60_000);

afterAll(async () => {
  await e?.stop();
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

afterEach(() => {
  vi.unstubAllEnvs();
  resetEnvForTests();
});

describe("localEngineOrigin", () => {
  it("is http://127.0.0.1:8787 by default", () => {
    useEnv({});
    expect(localEngineOrigin()).toBe("http://127.0.0.1:8787");
    expect(localEngineOrigins()).toEqual(["http://127.0.0.1:8787"]);
  });

  it("follows ORKESTR_ENGINE_PORT", () => {
    useEnv({ ORKESTR_ENGINE_PORT: "9100" });
    expect(localEngineOrigin()).toBe("http://127.0.0.1:9100");
  });

  it("is ORKESTR_API_URL's origin when that points at loopback", () => {
    useEnv({ ORKESTR_API_URL: "http://localhost:9200/v1", ORKESTR_ENGINE_PORT: "9100" });
    expect(localEngineOrigin()).toBe("http://localhost:9200");
    expect(localEngineOrigins()).toEqual(["http://localhost:9200", "http://127.0.0.1:9100"]);
    useEnv({ ORKESTR_API_URL: "http://127.0.0.1:9300" });
    expect(localEngineOrigin()).toBe("http://127.0.0.1:9300");
  });

  it("ignores a remote ORKESTR_API_URL", () => {
    useEnv({ ORKESTR_API_URL: "https://api.orkestr.eu", ORKESTR_ENGINE_PORT: "9100" });
    expect(localEngineOrigin()).toBe("http://127.0.0.1:9100");
    expect(localEngineOrigins()).toEqual(["http://127.0.0.1:9100"]);
  });
});

describe("with the engine sharing BATON_DATA_DIR", () => {
  it("is available", async () => {
    useEnv({ BATON_DATA_DIR: e.dataDir!, ORKESTR_API_URL: e.origin });
    expect(bootstrapSecretPath()).toBe(path.join(e.dataDir!, "engine", "bootstrap.secret"));
    expect(await isLocalEngineAvailable()).toBe(true);
    expect(await localEngineStatus()).toEqual({ available: true, origin: e.origin });
  });

  it("mints a read/write token that the engine accepts", async () => {
    useEnv({ BATON_DATA_DIR: e.dataDir!, ORKESTR_API_URL: e.origin });
    const { token, id } = await mintLocalEngineToken({ account: "team-x", label: "local-engine.test" });
    expect(token).toMatch(/^ork_[A-Za-z0-9_-]{8,}$/);
    expect(id).toMatch(/^tok_/);
    expect(token).not.toBe(e.token);
    // Reads: the limits check passes.
    expect(await checkConnection(e.origin, token, { localEngineOrigins: [e.origin] })).toMatchObject({
      ok: true,
      engine: { kind: "local" },
    });
    // Writes: an invalid create is refused for its body (422), not for a missing scope (403).
    const create = await e.api("POST", "/sandboxes", { template: 42 }, { token });
    expect(create.status).toBe(422);
    // A token minted twice is a different token.
    expect((await mintLocalEngineToken({ account: "team-x", label: "again" })).token).not.toBe(token);
    // It acts for the account it was minted in.
    expect((await e.api("GET", "/sandboxes/limits", undefined, { token })).body).toMatchObject({
      account: { name: "team-x" },
    });
  });

  it("revokes a token: the engine refuses it at once; an unknown one counts as revoked", async () => {
    useEnv({ BATON_DATA_DIR: e.dataDir!, ORKESTR_API_URL: e.origin });
    const { token, id } = await mintLocalEngineToken({ account: "team-x", label: "revoke" });
    expect((await e.api("GET", "/sandboxes", undefined, { token })).status).toBe(200);
    await revokeLocalEngineToken(id);
    expect((await e.api("GET", "/sandboxes", undefined, { token })).status).toBe(401);
    await revokeLocalEngineToken(id);
    await revokeLocalEngineToken("tok_01ZZZZZZZZZZZZZZZZZZZZZZZZ");
  });

  it("names one engine account per team (a user alone without one)", () => {
    expect(engineAccountFor("team_01ABC", "user_01XYZ")).toBe("team_01abc");
    expect(engineAccountFor(null, "user_01XYZ")).toBe("user_01xyz");
  });

  it("works when ORKESTR_API_URL is remote but ORKESTR_ENGINE_PORT is the engine's", async () => {
    useEnv({
      BATON_DATA_DIR: e.dataDir!,
      ORKESTR_API_URL: "https://api.orkestr.eu",
      ORKESTR_ENGINE_PORT: new URL(e.origin).port,
    });
    expect(localEngineOrigin()).toBe(e.origin);
    expect(await isLocalEngineAvailable()).toBe(true);
    expect((await mintLocalEngineToken({ account: "default", label: "port" })).token).toMatch(/^ork_/);
  });
});

describe("when the local engine is not usable", () => {
  it("says the bootstrap secret is missing, naming the directory", async () => {
    const dir = tmpDir();
    useEnv({ BATON_DATA_DIR: dir, ORKESTR_API_URL: e.origin });
    const err = await rejectsWith(mintLocalEngineToken({ account: "default", label: "x" }), LocalEngineError);
    expect(err.code).toBe("local_engine_secret_missing");
    expect(err.detail).toBe(
      `The local engine's bootstrap secret was not found in ${path.join(dir, "engine")}; is the engine running with the same BATON_DATA_DIR?`,
    );
    // The engine answers /healthz, but this console cannot prove it is the same engine.
    expect(await isLocalEngineAvailable()).toBe(false);
    expect((await localEngineStatus()).reason).toBe(err.detail);
  });

  it("says the engine refused a secret from another data dir", async () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, "engine"));
    fs.writeFileSync(path.join(dir, "engine", "bootstrap.secret"), "not-the-engines-secret\n");
    useEnv({ BATON_DATA_DIR: dir, ORKESTR_API_URL: e.origin });
    const err = await rejectsWith(mintLocalEngineToken({ account: "default", label: "x" }), LocalEngineError);
    expect(err.code).toBe("local_engine_refused");
    expect(err.detail).toMatch(
      /refused the bootstrap secret from .*\(401\): it belongs to another engine\. Is the engine running with the same BATON_DATA_DIR\?$/,
    );
    expect(err.detail).not.toMatch(/not-the-engines-secret/);
  });

  it("says the engine is not running", async () => {
    const port = await closedPort();
    useEnv({ BATON_DATA_DIR: e.dataDir!, ORKESTR_API_URL: `http://127.0.0.1:${port}` });
    const status = await localEngineStatus();
    expect(status.available).toBe(false);
    expect(status.reason).toMatch(
      new RegExp(
        `^The local engine at http://127\\.0\\.0\\.1:${port} is not running \\(ECONNREFUSED\\)\\. Start it with: npm run engine$`,
      ),
    );
    const err = await rejectsWith(mintLocalEngineToken({ account: "default", label: "x" }), LocalEngineError);
    expect(err.code).toBe("local_engine_unreachable");
    expect(err.detail).toMatch(/is not running \(ECONNREFUSED\)/);
  });

  it("gives up on /healthz after 1 s", async () => {
    const slow = http.createServer((_req, res) => {
      setTimeout(() => res.end("{}"), 3_000);
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    try {
      useEnv({
        BATON_DATA_DIR: e.dataDir!,
        ORKESTR_API_URL: `http://127.0.0.1:${(slow.address() as AddressInfo).port}`,
      });
      const started = Date.now();
      const status = await localEngineStatus();
      const elapsed = Date.now() - started;
      expect(status.available).toBe(false);
      expect(status.reason).toMatch(/did not answer within 1000 ms/);
      expect(elapsed).toBeGreaterThanOrEqual(900);
      expect(elapsed).toBeLessThan(2_500);
    } finally {
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });
});
