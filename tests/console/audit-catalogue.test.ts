import "server-only";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { AUDIT_ACTIONS, AUDIT_RESULTS, AUDIT_TARGET_TYPES } from "../../lib/audit-actions";
import { refusedAction } from "../../lib/server/route";

// lib/audit-actions.ts against what the server writes. recordAudit's `action` is typed by the
// catalogue, so a literal missing from it already fails typecheck; this reads the sources too (a
// cast or a string built at run time gets past the type), checks that no entry is stale, and that
// every mutating API route's refusal, whose action refusedAction() finds from the method and path, is
// named by an entry rather than falling back to request.refused.

const ROOT = join(__dirname, "../..");

function files(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === "node_modules" ? [] : files(p, keep);
    return keep(name) ? [p] : [];
  });
}

const isSource = (name: string) => /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name);
const SOURCES = [...files(join(ROOT, "app"), isSource), ...files(join(ROOT, "lib/server"), isSource)].map((p) => ({
  path: relative(ROOT, p),
  text: readFileSync(p, "utf8"),
}));

const NAME = String.raw`[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+`;
/** `audit("x"`, `ctx.audit("x"`, `audit: "x"` (route option), `action: "x"` (recordAudit and its wrappers). */
const WRITES = [
  new RegExp(String.raw`\baudit\(\s*"(${NAME})"`, "g"),
  new RegExp(String.raw`\baudit:\s*"(${NAME})"`, "g"),
  new RegExp(String.raw`\baction:\s*"(${NAME})"`, "g"),
];

function literals(patterns: RegExp[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const { path, text } of SOURCES)
    for (const re of patterns) for (const m of text.matchAll(re)) found.set(m[1]!, [...(found.get(m[1]!) ?? []), path]);
  return found;
}

const MUTATIONS = ["POST", "PUT", "PATCH", "DELETE"] as const;
/** POSTs that read (the token is in the body, not the URL): a refusal of one changes nothing. */
const READS_BY_POST = new Set(["POST /api/invitations/lookup"]);

/** Every mutating API route a signed-in user can be refused by, as a request path with made-up ids. */
function mutatingRoutes(): { method: string; path: string; declared: string | undefined; file: string }[] {
  return files(join(ROOT, "app/api"), (n) => n === "route.ts").flatMap((file) => {
    const text = readFileSync(file, "utf8");
    const auth = /\bauth:\s*"(\w+)"/.exec(text)?.[1];
    if (auth === "public") return [];
    const declared = /\baudit:\s*"([\w.]+)"/.exec(text)?.[1];
    const path = relative(join(ROOT, "app"), file)
      .replace(/\/route\.ts$/, "")
      .replace(/\[(\w+)\]/g, "ID_01J0000000000000000000000");
    return MUTATIONS.filter((m) => new RegExp(String.raw`export (const|async function) ${m}\b`).test(text)).map(
      (method) => ({ method, path: `/${path}`, declared, file: relative(ROOT, file) }),
    );
  });
}

describe("the audit action catalogue (lib/audit-actions.ts)", () => {
  const catalogue = new Set<string>(AUDIT_ACTIONS);

  it("has every action the server's sources record", () => {
    const written = literals(WRITES);
    // The scan finds the writers at all (about 70 distinct actions are written as literals).
    expect(written.size).toBeGreaterThan(50);
    const missing = [...written].filter(([a]) => !catalogue.has(a)).map(([a, where]) => `${a} (${where.join(", ")})`);
    expect(missing, "recorded but not in lib/audit-actions.ts").toEqual([]);
  });

  it("has no entry the server never records", () => {
    const stale = AUDIT_ACTIONS.filter((a) => !SOURCES.some(({ text }) => text.includes(`"${a}"`)));
    expect(stale, "in lib/audit-actions.ts but written nowhere").toEqual([]);
  });

  it("has no duplicates, and every entry is resource.verb", () => {
    expect(new Set(AUDIT_ACTIONS).size).toBe(AUDIT_ACTIONS.length);
    for (const a of AUDIT_ACTIONS) expect(a).toMatch(new RegExp(`^${NAME}$`));
  });

  it("names every mutating route's refusal (refusedAction); the resource API's never fall back", () => {
    const routes = mutatingRoutes();
    expect(routes.length).toBeGreaterThan(50);
    const unnamed: string[] = [];
    for (const r of routes) {
      const refused = refusedAction(r.method, r.path);
      const action = r.declared ?? refused.action;
      expect(catalogue.has(action), `${r.method} ${r.path} → ${action}`).toBe(true);
      if (refused.targetType !== null) expect(AUDIT_TARGET_TYPES).toContain(refused.targetType);
      if (action === "request.refused" && !READS_BY_POST.has(`${r.method} ${r.path}`))
        unnamed.push(`${r.method} ${r.file}`);
    }
    expect(
      unnamed,
      "refused as request.refused: add the action, or a CONSOLE_REFUSALS / REFUSED_ACTION entry in route.ts",
    ).toEqual([]);
  });

  it("names a console route's refusal by its pattern, with the target the path names", () => {
    // Each of these was named from the path's first segments before (a refused revocation of an
    // invitation was recorded as team.delete on a target "invitations").
    const inv = "inv_01J0000000000000000000000";
    const user = "usr_01J0000000000000000000000";
    expect(refusedAction("DELETE", `/api/team/invitations/${inv}`)).toEqual({
      action: "invitation.revoke",
      targetType: "invitation",
      targetId: inv,
    });
    expect(refusedAction("POST", `/api/team/invitations/${inv}/resend`).action).toBe("invitation.resend");
    expect(refusedAction("POST", "/api/team/invitations").action).toBe("invitation.create");
    expect(refusedAction("PATCH", `/api/team/members/${user}`)).toEqual({
      action: "member.role_change",
      targetType: "member",
      targetId: user,
    });
    expect(refusedAction("DELETE", `/api/team/members/${user}`).action).toBe("member.remove");
    expect(refusedAction("DELETE", `/api/team/members/${user}/sessions/ses_1`)).toEqual({
      action: "member.session_revoke",
      targetType: "member",
      targetId: user,
    });
    expect(refusedAction("POST", "/api/team/leave").action).toBe("member.leave");
    expect(refusedAction("PUT", "/api/team/sso").action).toBe("sso.config_update");
    expect(refusedAction("DELETE", "/api/team/sso").action).toBe("sso.config_delete");
    expect(refusedAction("POST", "/api/team/transfer-ownership").action).toBe("team.ownership_transfer");
    // Targets the path does not name are the acting team or the signed-in user (route.ts fills them).
    expect(refusedAction("DELETE", "/api/team")).toEqual({
      action: "team.delete",
      targetType: "team",
      targetId: null,
      targetIs: "team",
    });
    expect(refusedAction("POST", "/api/me/totp/confirm")).toEqual({
      action: "user.totp_enable",
      targetType: "user",
      targetId: null,
      targetIs: "user",
    });
    // A console path no pattern knows is not guessed.
    expect(refusedAction("DELETE", "/api/team/gadgets/gdg_1")).toEqual({
      action: "request.refused",
      targetType: null,
      targetId: null,
    });
    expect(refusedAction("DELETE", "/api/team/%E0%A4%A")).toEqual({
      action: "request.refused",
      targetType: null,
      targetId: null,
    });
  });

  it("derives refusals as their successes are named, and falls back to request.refused", () => {
    const id = "sbx_1";
    expect(refusedAction("POST", `/api/v1/sandboxes/${id}/files`).action).toBe("sandbox.file_write");
    expect(refusedAction("DELETE", `/api/v1/sandboxes/${id}/files`).action).toBe("sandbox.file_delete");
    expect(refusedAction("PUT", `/api/v1/sandboxes/${id}/files/raw`).action).toBe("sandbox.file_upload");
    expect(refusedAction("POST", `/api/v1/sandboxes/${id}/exec/stream`).action).toBe("sandbox.exec");
    expect(refusedAction("POST", `/api/v1/sandboxes/${id}/timeout`).action).toBe("sandbox.set_timeout");
    expect(refusedAction("POST", "/api/v1/webhooks/whk_1/rotate-secret").action).toBe("webhook.rotate_secret");
    expect(refusedAction("POST", "/api/v1/gadgets/gdg_1/frob").action).toBe("request.refused");
  });

  it("lists the results and target types the sources write", () => {
    const results = literals([/\bresult:\s*"([a-z_]+)"/g]);
    expect([...results.keys()].filter((r) => !(AUDIT_RESULTS as readonly string[]).includes(r))).toEqual([]);
    const types = literals([/\btargetType:\s*(?:[^"\n,]*\?\s*)?"([a-z_]+)"/g]);
    expect(types.size).toBeGreaterThan(3);
    expect([...types.keys()].filter((t) => !(AUDIT_TARGET_TYPES as readonly string[]).includes(t))).toEqual([]);
    // A target given by id alone is typed by its action's resource (route.ts recordFor).
    const resources = new Set(AUDIT_ACTIONS.map((a) => a.split(".")[0]!));
    for (const r of ["auth", "request"]) resources.delete(r);
    expect([...resources].filter((r) => !(AUDIT_TARGET_TYPES as readonly string[]).includes(r))).toEqual([]);
  });
});
