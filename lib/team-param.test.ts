import { describe, expect, it } from "vitest";
import { readTeamParam, validTeamSlug, withoutTeam, withTeam } from "./team-param";

describe("the team query parameter", () => {
  it("is read from paths, queries, URLs and search params", () => {
    expect(readTeamParam("/sandboxes?team=acme")).toBe("acme");
    expect(readTeamParam("/sandboxes?status=running&team=acme#top")).toBe("acme");
    expect(readTeamParam("?team=b-2")).toBe("b-2");
    expect(readTeamParam(new URL("http://x.test/a?team=acme"))).toBe("acme");
    expect(readTeamParam(new URLSearchParams("team=acme"))).toBe("acme");
    expect(readTeamParam("/sandboxes")).toBeNull();
    expect(readTeamParam("/sandboxes?team=")).toBeNull();
    expect(readTeamParam("/a#x?team=acme")).toBeNull();
    expect(readTeamParam(null)).toBeNull();
    // A malformed value is kept: the server answers "not found" rather than picking another team.
    expect(readTeamParam("/a?team=Not%20A%20Slug")).toBe("Not A Slug");
  });

  it("is added to a console path, replacing any team it had, keeping the rest", () => {
    expect(withTeam("/sandboxes", "acme")).toBe("/sandboxes?team=acme");
    expect(withTeam("/sandboxes?status=running", "acme")).toBe("/sandboxes?status=running&team=acme");
    expect(withTeam("/sandboxes?team=old&x=1#logs", "acme")).toBe("/sandboxes?team=acme&x=1#logs");
    expect(withTeam("/sandboxes/sbx_1/files#a?b", "acme")).toBe("/sandboxes/sbx_1/files?team=acme#a?b");
    expect(withTeam("?page=2", "acme")).toBe("?page=2&team=acme");
  });

  it("leaves other origins, protocol-relative links and missing slugs alone", () => {
    expect(withTeam("https://docs.example/x", "acme")).toBe("https://docs.example/x");
    expect(withTeam("//evil.example/x", "acme")).toBe("//evil.example/x");
    expect(withTeam("mailto:a@b.c", "acme")).toBe("mailto:a@b.c");
    expect(withTeam("/sandboxes", null)).toBe("/sandboxes");
    expect(withTeam("/sandboxes", "")).toBe("/sandboxes");
  });

  it("is removed without touching the other parameters", () => {
    expect(withoutTeam("/sandboxes?team=acme")).toBe("/sandboxes");
    expect(withoutTeam("/sandboxes?a=1&team=acme&b=2#f")).toBe("/sandboxes?a=1&b=2#f");
    expect(withoutTeam("/sandboxes")).toBe("/sandboxes");
  });

  it("accepts only well-formed slugs", () => {
    expect(validTeamSlug("acme-2")).toBe("acme-2");
    for (const bad of ["", "-acme", "acme-", "Acme", "a b", "a".repeat(49), null, undefined])
      expect(validTeamSlug(bad)).toBeNull();
  });
});

describe("switching teams", () => {
  it("keeps the page, and leaves a resource of the old team for its section's list", async () => {
    const { switchTeamHref } = await import("./team-param");
    expect(switchTeamHref("/sandboxes?team=a&status=running", "b")).toBe("/sandboxes?status=running&team=b");
    expect(switchTeamHref("/sandboxes/sbx_123/files?team=a", "b")).toBe("/sandboxes?team=b");
    expect(switchTeamHref("/sandboxes/new?team=a", "b")).toBe("/sandboxes/new?team=b");
    expect(switchTeamHref("/settings/connections?team=a#x", "b")).toBe("/settings/connections?team=b");
    expect(switchTeamHref("/usage", "b")).toBe("/usage?team=b");
  });
});
