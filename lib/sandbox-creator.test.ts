import { describe, expect, it } from "vitest";
import {
  CREATOR_STAMP_KEYS,
  creatorFilter,
  creatorName,
  creatorOf,
  creatorViaOf,
  creatorViaText,
  reservedKeysIn,
  reservedMetadataProblem,
  sandboxesByCreatorHref,
  stampOf,
  userMetadata,
  withCreatorStamp,
} from "./sandbox-creator";

describe("the creator stamp", () => {
  it("adds baton.user and baton.team to the client's metadata", () => {
    const stamped = withCreatorStamp({ agent_run: "r_1" }, { userId: "usr_a", teamId: "team_t" });
    expect(stamped).toEqual({ agent_run: "r_1", "baton.user": "usr_a", "baton.team": "team_t" });
    expect(Object.keys(stampOf(stamped))).toHaveLength(2);
    expect(withCreatorStamp(undefined, { userId: "u", teamId: "t" })).toEqual({ "baton.user": "u", "baton.team": "t" });
  });

  it("never lets a client's baton.* key through, whatever its case", () => {
    expect(withCreatorStamp({ "baton.user": "usr_evil" }, { userId: "usr_a", teamId: "t" })["baton.user"]).toBe(
      "usr_a",
    );
    expect(reservedKeysIn({ a: "1", "baton.user": "x", "Baton.Team": "y", batonish: "z" })).toEqual([
      "baton.user",
      "Baton.Team",
    ]);
    expect(reservedMetadataProblem({ a: "1" })).toBeNull();
    expect(reservedMetadataProblem(null)).toBeNull();
    expect(reservedMetadataProblem({ "baton.user": "x" })).toContain('"baton.user"');
  });

  it("reads the creator back, and leaves the rest as the user's to edit", () => {
    const metadata = { env: "prod", "baton.user": "usr_a", "baton.team": "team_t" };
    expect(creatorOf(metadata)).toBe("usr_a");
    expect(creatorOf({ env: "prod" })).toBeNull();
    expect(creatorOf(null)).toBeNull();
    expect(userMetadata(metadata)).toEqual({ env: "prod" });
    expect(stampOf(metadata)).toEqual({ "baton.user": "usr_a", "baton.team": "team_t" });
  });

  it("filters and links the list by creator", () => {
    expect(creatorFilter("usr_a")).toEqual(["baton.user", "usr_a"]);
    expect(sandboxesByCreatorHref("usr_a b")).toBe("/sandboxes?creator=usr_a+b");
  });

  it("names the creator for the list: you, a member, a former member, or outside Baton", () => {
    const members = { usr_a: "Ada", usr_b: "Bo" };
    const by = (id: string) => ({ "baton.user": id, "baton.team": "team_t" });
    expect(creatorName(by("usr_a"), "usr_a", members)).toEqual({ kind: "you", text: "You", via: null });
    expect(creatorName(by("usr_b"), "usr_a", members)).toEqual({ kind: "member", text: "Bo", via: null });
    expect(creatorName(by("usr_gone"), "usr_a", members)).toEqual({ kind: "former", text: "Former member", via: null });
    // A prototype key is not a member.
    expect(creatorName(by("constructor"), "usr_a", members).kind).toBe("former");
    for (const metadata of [{ env: "prod" }, null, { "baton.team": "team_t" }, { "baton.user": "" }])
      expect(creatorName(metadata, "usr_a", members)).toEqual({ kind: "outside", text: "outside Baton", via: null });
    // Without a known viewer, their own sandbox is named like anyone's.
    expect(creatorName(by("usr_a"), null, members)).toEqual({ kind: "member", text: "Ada", via: null });
  });
});

describe("the stamp's via (issue 23: made with an API token, or over MCP)", () => {
  it("adds baton.via and baton.token for a token or MCP, nothing for the browser", () => {
    const browser = withCreatorStamp({ a: "1" }, { userId: "usr_a", teamId: "team_t" });
    expect(creatorViaOf(browser)).toBeNull();
    expect(browser).not.toHaveProperty("baton.via");
    const token = withCreatorStamp(
      { a: "1" },
      { userId: "usr_a", teamId: "team_t", via: { channel: "token", tokenId: "tok_1" } },
    );
    expect(token).toMatchObject({ a: "1", "baton.via": "token", "baton.token": "tok_1", "baton.user": "usr_a" });
    expect(Object.keys(stampOf(token)).length).toBeLessThanOrEqual(CREATOR_STAMP_KEYS);
    expect(creatorViaOf(token)).toEqual({ channel: "token", tokenId: "tok_1" });
    const mcp = withCreatorStamp(undefined, { userId: "u", teamId: "t", via: { channel: "mcp", tokenId: "tok_2" } });
    expect(creatorViaOf(mcp)).toEqual({ channel: "mcp", tokenId: "tok_2" });
  });

  it("a client's own baton.via is never kept, and an unknown channel is not a via", () => {
    expect(withCreatorStamp({ "baton.via": "mcp" }, { userId: "u", teamId: "t" })).not.toHaveProperty("baton.via");
    expect(creatorViaOf({ "baton.via": "carrier-pigeon", "baton.token": "tok_1" })).toBeNull();
  });

  it("names the token from the team's tokens in the list's Created by", () => {
    const md = withCreatorStamp(undefined, {
      userId: "usr_b",
      teamId: "t",
      via: { channel: "token", tokenId: "tok_1" },
    });
    expect(creatorName(md, "usr_a", { usr_b: "Bo" }, { tok_1: "ci bot" })).toEqual({
      kind: "member",
      text: "Bo",
      via: "via API token ci bot",
    });
    // A token id the team does not have (another team's, or a deleted row) names nothing.
    expect(creatorName(md, "usr_a", { usr_b: "Bo" }, {}).via).toBe("via API token an unknown token");
  });

  it("reads as the console's Created by says it", () => {
    expect(creatorViaText({ channel: "token", tokenId: "tok_1" }, "ci bot")).toBe("via API token ci bot");
    expect(creatorViaText({ channel: "mcp", tokenId: "tok_1" }, "claude")).toBe("via MCP (claude)");
  });
});
