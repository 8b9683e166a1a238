import { describe, expect, it } from "vitest";
import { effectiveRole, managesTeamTokens, mayMakeNonExpiring, scopeAllowed, scopesFor } from "./scope";

describe("a token's scope narrows its owner's role", () => {
  it.each([
    ["owner", "read", "viewer"],
    ["admin", "read", "viewer"],
    ["member", "read", "viewer"],
    ["viewer", "read", "viewer"],
    ["owner", "write", "member"],
    ["admin", "write", "member"],
    ["member", "write", "member"],
    ["viewer", "write", "viewer"],
  ] as const)("%s with a %s token acts as %s", (role, scope, acts) => {
    expect(effectiveRole(role, scope)).toBe(acts);
  });

  it("gives write tokens to roles that change something, never-expiring ones and the team's list to admins", () => {
    expect(scopesFor("viewer")).toEqual(["read"]);
    expect(scopesFor("member")).toEqual(["read", "write"]);
    expect(scopeAllowed("viewer", "write")).toBe(false);
    expect([mayMakeNonExpiring("member"), mayMakeNonExpiring("admin"), mayMakeNonExpiring("owner")]).toEqual([
      false,
      true,
      true,
    ]);
    expect([managesTeamTokens("viewer"), managesTeamTokens("member"), managesTeamTokens("admin")]).toEqual([
      false,
      false,
      true,
    ]);
  });
});
