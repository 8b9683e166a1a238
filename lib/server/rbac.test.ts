import "server-only";
import { describe, expect, it } from "vitest";
import { ROLES } from "./db/schema";
import {
  actingCan,
  actingPermissions,
  can,
  engineScopesFor,
  isPermission,
  PERMISSIONS,
  ROLE_PERMISSIONS,
  type Permission,
} from "./rbac";

// The whole role × permission matrix, written out: a change to what a role may do shows up here.
const EXPECTED: Record<Permission, Record<(typeof ROLES)[number], boolean>> = {
  "sandboxes.read": { owner: true, admin: true, member: true, viewer: true },
  "sandboxes.write": { owner: true, admin: true, member: true, viewer: false },
  "volumes.read": { owner: true, admin: true, member: true, viewer: true },
  "volumes.write": { owner: true, admin: true, member: true, viewer: false },
  "snapshots.read": { owner: true, admin: true, member: true, viewer: true },
  "snapshots.write": { owner: true, admin: true, member: true, viewer: false },
  "templates.read": { owner: true, admin: true, member: true, viewer: true },
  "templates.write": { owner: true, admin: true, member: true, viewer: false },
  "webhooks.read": { owner: true, admin: true, member: true, viewer: true },
  "webhooks.write": { owner: true, admin: true, member: true, viewer: false },
  "usage.read": { owner: true, admin: true, member: true, viewer: true },
  "connections.manage": { owner: true, admin: true, member: true, viewer: false },
  "team.read": { owner: true, admin: true, member: true, viewer: true },
  "team.manage": { owner: true, admin: true, member: false, viewer: false },
  "team.delete": { owner: true, admin: false, member: false, viewer: false },
  "members.manage": { owner: true, admin: true, member: false, viewer: false },
  "billing.manage": { owner: true, admin: false, member: false, viewer: false },
  "billing.delegate": { owner: true, admin: false, member: false, viewer: false },
  "audit.read": { owner: true, admin: true, member: false, viewer: false },
  "audit.manage": { owner: true, admin: false, member: false, viewer: false },
  "ownership.transfer": { owner: true, admin: false, member: false, viewer: false },
};

describe("rbac", () => {
  it("the expected matrix covers every permission", () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...PERMISSIONS].sort());
  });

  for (const permission of PERMISSIONS) {
    for (const role of ROLES) {
      const allowed = EXPECTED[permission][role];
      it(`${role} ${allowed ? "may" : "may not"} ${permission}`, () => {
        expect(can(role, permission)).toBe(allowed);
      });
    }
  }

  it("an owner's delegation adds billing.manage to admins, and nothing else to anyone", () => {
    for (const adminsManageBilling of [false, true])
      for (const role of ROLES)
        for (const permission of PERMISSIONS) {
          const delegated = adminsManageBilling && role === "admin" && permission === "billing.manage";
          expect(actingCan({ role, team: { adminsManageBilling } }, permission), `${role} ${permission}`).toBe(
            EXPECTED[permission][role] || delegated,
          );
        }
    expect(actingPermissions({ role: "admin", team: { adminsManageBilling: true } })).toContain("billing.manage");
    expect(actingPermissions({ role: "admin", team: { adminsManageBilling: true } })).not.toContain("billing.delegate");
    expect(actingPermissions({ role: "admin", team: { adminsManageBilling: false } })).not.toContain("billing.manage");
    expect(actingCan(null, "sandboxes.read")).toBe(false);
  });

  it("roles are ordered: each one grants everything the one below it does", () => {
    const ladder = ["viewer", "member", "admin", "owner"] as const;
    for (let i = 1; i < ladder.length; i++) {
      const lower = ROLE_PERMISSIONS[ladder[i - 1]!];
      const higher = new Set(ROLE_PERMISSIONS[ladder[i]!]);
      for (const p of lower) expect(higher.has(p), `${ladder[i]} lacks ${p}`).toBe(true);
    }
  });

  it("owners hold every permission; no role holds an unknown one", () => {
    expect([...ROLE_PERMISSIONS.owner].sort()).toEqual([...PERMISSIONS].sort());
    for (const role of ROLES) for (const p of ROLE_PERMISSIONS[role]) expect(isPermission(p)).toBe(true);
  });

  it("no role, or an unknown one, grants nothing", () => {
    expect(can(null, "sandboxes.read")).toBe(false);
    expect(can(undefined, "sandboxes.read")).toBe(false);
    expect(can("superuser" as never, "sandboxes.read")).toBe(false);
    expect(isPermission("sandboxes.delete_everything")).toBe(false);
  });
});

describe("engine scopes per role", () => {
  it("a viewer's local-engine token may only read; every role that may change something also writes", () => {
    expect(engineScopesFor("viewer")).toEqual(["sandboxes:read"]);
    for (const role of ["member", "admin", "owner"] as const)
      expect(engineScopesFor(role)).toEqual(["sandboxes:read", "sandboxes:write"]);
  });
});
