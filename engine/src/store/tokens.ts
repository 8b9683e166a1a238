import { createHash, timingSafeEqual } from "node:crypto";
import type { Db } from "./db.js";
import { newId, newSecret } from "../lib/ids.js";

export const SCOPES = ["sandboxes:read", "sandboxes:write"] as const;
export type Scope = (typeof SCOPES)[number];

export interface TokenRecord {
  id: string;
  scopes: Scope[];
  hint: string;
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** Mints an `ork_…` token; only its SHA-256 is stored, so the plain value exists once, in the return. */
export function mintToken(db: Db, scopes: Scope[], label?: string): { token: string; record: TokenRecord } {
  const token = newSecret("ork", 24);
  const id = newId("tok");
  const hint = `ork_…${token.slice(-4)}`;
  db.prepare("INSERT INTO tokens(id, hash, hint, scopes, label, created_at) VALUES (?, ?, ?, ?, ?, ?)").run(
    id, sha256(token), hint, scopes.join(","), label ?? null, Date.now(),
  );
  return { token, record: { id, scopes, hint } };
}

export function verifyToken(db: Db, token: string): TokenRecord | null {
  if (!token.startsWith("ork_") || token.length > 200) return null;
  const hash = sha256(token);
  const row = db.prepare("SELECT id, hash, hint, scopes FROM tokens WHERE hash = ? AND revoked_at IS NULL").get(hash) as
    | { id: string; hash: string; hint: string; scopes: string }
    | undefined;
  if (!row || !timingSafeEqual(Buffer.from(row.hash), Buffer.from(hash))) return null;
  return { id: row.id, hint: row.hint, scopes: row.scopes.split(",").filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)) };
}

export function parseScopes(input: string): Scope[] {
  const scopes = input.split(",").map((s) => s.trim()).filter(Boolean);
  const bad = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (bad.length) throw new Error(`unknown scope(s): ${bad.join(", ")}; known: ${SCOPES.join(", ")}`);
  if (!scopes.length) throw new Error("at least one scope is required");
  return scopes as Scope[];
}
