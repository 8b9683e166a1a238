import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StreamLeases, type StreamCutOff } from "../src/services/stream-leases.js";
import { openDb, type Db } from "../src/store/db.js";
import { mintToken, revokeToken, type TokenRecord } from "../src/store/tokens.js";

/** The stream registry on its own (services/stream-leases.ts): counts, caps and cut-offs, no HTTP. */
let dir: string;
let db: Db;
let leases: StreamLeases;
const mint = (account = "default", expiresAt: number | null = null): TokenRecord =>
  mintToken(db, ["sandboxes:read"], { account, expiresAt }).record;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-leases-"));
  db = openDb(dir);
  leases = new StreamLeases(db, { perToken: 2, perAccount: 3, authCheckMs: 60_000 });
});
afterEach(() => {
  leases.close();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("stream leases", () => {
  it("count per token and per account, refuse past either cap, and give a slot back exactly once", () => {
    const a = mint();
    const b = mint();
    const x = leases.acquire(a, () => undefined);
    leases.acquire(a, () => undefined);
    expect(() => leases.acquire(a, () => undefined)).toThrow(/This token already has 2 streams open/);
    leases.acquire(b, () => undefined);
    expect(() => leases.acquire(b, () => undefined)).toThrow(/This account's tokens already have 3 streams open/);
    expect(leases.counts().tokens).toEqual({ [a.id]: 2, [b.id]: 1 });
    x.release();
    x.release();
    expect(leases.counts()).toEqual({ tokens: { [a.id]: 1, [b.id]: 1 }, accounts: { [a.account.id]: 2 } });
    leases.acquire(b, () => undefined);
    expect(() => leases.acquire(mint(), () => undefined)).toThrow(/account/);
    // Another account has its own count.
    leases.acquire(mint("other"), () => undefined);
  });

  it("a revocation ends that token's streams only, releasing their slots first", () => {
    const a = mint();
    const b = mint();
    const cut: string[] = [];
    leases.acquire(a, (why) => cut.push(`a1 ${why.code}`));
    leases.acquire(a, (why) => cut.push(`a2 ${why.code}`));
    leases.acquire(b, (why) => cut.push(`b ${why.code}`));
    leases.revoked(a.id);
    expect(cut).toEqual(["a1 token_revoked", "a2 token_revoked"]);
    expect(leases.counts().tokens).toEqual({ [b.id]: 1 });
  });

  it("the check ends streams of tokens revoked elsewhere, expired or deleted, and says which", () => {
    const now = Date.now();
    const kept = mint();
    const revoked = mint();
    const expiring = mint("default", now + 1000);
    const deleted = mint("other");
    const cut: Record<string, StreamCutOff["code"]> = {};
    for (const [name, t] of Object.entries({ kept, revoked, expiring, deleted }))
      leases.acquire(t, (why) => (cut[name] = why.code));
    leases.check(now);
    expect(cut).toEqual({});
    revokeToken(db, revoked.id);
    db.prepare("DELETE FROM tokens WHERE id = ?").run(deleted.id);
    leases.check(now + 1000);
    expect(cut).toEqual({ revoked: "token_revoked", expiring: "token_expired", deleted: "token_revoked" });
    expect(Object.keys(leases.counts().tokens)).toEqual([kept.id]);
  });
});
