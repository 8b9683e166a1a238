import "server-only";
import { describe, expect, it } from "vitest";
import { hasPermission, NO_PERMISSIONS } from "../../lib/permissions";
import { roleReason } from "../../lib/role-reason";
import type { ActingTeam } from "../../lib/server/acting-team";
import { clientPermissions, leastRoleWith, reasonFor } from "../../lib/server/client-permissions";
import { can, PERMISSIONS, ROLE_PERMISSIONS, ROLES, type Role } from "../../lib/server/rbac";

// What the browser is told about the user's role (lib/server/client-permissions.ts) and the words
// it shows where a control is not offered (lib/role-reason.ts).

const TEAM = { id: "team_1", name: "Acme", slug: "acme", createdAt: new Date(0), updatedAt: new Date(0) };
function acting(role: Role): ActingTeam {
  return { userId: "usr_1", team: TEAM as unknown as ActingTeam["team"], role, connection: null, noConnection: "none" };
}

describe("the permissions sent to the browser", () => {
  it("are rbac.ts's, role by role, and grant exactly what can() grants", () => {
    for (const role of ROLES) {
      const access = clientPermissions("usr_1", acting(role));
      expect(access).toMatchObject({ userId: "usr_1", role, team: { id: "team_1", name: "Acme" } });
      expect([...access.permissions].sort()).toEqual([...ROLE_PERMISSIONS[role]].sort());
      for (const p of PERMISSIONS) expect(hasPermission(access, p), `${role} ${p}`).toBe(can(role, p));
    }
  });

  it("name, for each permission, the least role that grants it", () => {
    const access = clientPermissions("usr_1", acting("viewer"));
    expect(access.grantedFrom["sandboxes.write"]).toBe("member");
    expect(access.grantedFrom["members.manage"]).toBe("admin");
    expect(access.grantedFrom["billing.manage"]).toBe("owner");
    expect(access.grantedFrom["sandboxes.read"]).toBe("viewer");
    for (const p of PERMISSIONS) {
      const least = leastRoleWith(p)!;
      expect(can(least, p)).toBe(true);
      // Every role below it lacks the permission.
      for (const lower of ROLES.slice(ROLES.indexOf(least) + 1)) expect(can(lower, p), `${lower} ${p}`).toBe(false);
    }
    // Roles are given by admins (members.manage), the owner role only by owners.
    expect(access.grantedBy).toEqual({ viewer: "admin", member: "admin", admin: "admin", owner: "owner" });
  });

  it("grant nothing without a team", () => {
    const access = clientPermissions("usr_1", null);
    expect(access.permissions).toEqual([]);
    expect(access.role).toBeNull();
    for (const p of PERMISSIONS) expect(hasPermission(access, p)).toBe(false);
    expect(hasPermission(NO_PERMISSIONS, "sandboxes.read")).toBe(false);
  });
});

describe("role reasons", () => {
  it("say who cannot do what, and whom to ask for which role", () => {
    const viewer = clientPermissions("usr_1", acting("viewer"));
    expect(roleReason(viewer, "sandboxes.write", "open a terminal")).toBe(
      "Viewers can't open a terminal: ask an admin for the member role.",
    );
    expect(roleReason(viewer, "volumes.write", "create or change volumes")).toBe(
      "Viewers can't create or change volumes: ask an admin for the member role.",
    );
    const member = clientPermissions("usr_1", acting("member"));
    expect(roleReason(member, "members.manage", "manage the team's members")).toBe(
      "Members can't manage the team's members: ask an admin for the admin role.",
    );
    const admin = clientPermissions("usr_1", acting("admin"));
    expect(roleReason(admin, "billing.manage", "manage billing")).toBe(
      "Admins can't manage billing: ask an owner for the owner role.",
    );
  });

  it("are null for what the role may do", () => {
    for (const role of ROLES) {
      const access = clientPermissions("usr_1", acting(role));
      for (const p of ROLE_PERMISSIONS[role]) expect(roleReason(access, p, "anything")).toBeNull();
    }
    expect(reasonFor(acting("member"), "sandboxes.write", "open a terminal")).toBeNull();
    expect(reasonFor(acting("viewer"), "templates.write", "create templates")).toBe(
      "Viewers can't create templates: ask an admin for the member role.",
    );
  });

  it("say so without a team, and when no role grants the permission", () => {
    expect(roleReason(clientPermissions("usr_1", null), "sandboxes.write", "create sandboxes")).toBe(
      "You are not a member of a team, so you can't create sandboxes.",
    );
    const odd = { ...clientPermissions("usr_1", acting("viewer")), grantedFrom: {} };
    expect(roleReason(odd, "sandboxes.write", "open a terminal")).toBe("Viewers can't open a terminal.");
  });
});
