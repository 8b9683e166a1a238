import { describe, expect, it } from "vitest";
import { refusalOf, refusalText } from "./refusal-text";

describe("refusalText", () => {
  it("gives Baton's sentence, the code, and that a person must raise a reached cap", () => {
    const text = refusalText(
      "create a sandbox",
      refusalOf(402, { code: "spend_cap_reached", detail: "The team's monthly cap of EUR 5.00 is reached." }),
    );
    expect(text).toContain("Could not create a sandbox: The team's monthly cap of EUR 5.00 is reached.");
    expect(text).toContain("[spend_cap_reached, HTTP 402]");
    expect(text).toMatch(/A person must act: a billing manager/);
  });

  it("says a 403 is the token's role, which a person changes", () => {
    const text = refusalText(
      "create a sandbox",
      refusalOf(403, { code: "forbidden", detail: "Viewers cannot create sandboxes." }),
    );
    expect(text).toMatch(/role or scopes/);
  });

  it("tells an agent to wait on fleet_full and to get a new token on 401", () => {
    expect(refusalText("resume", refusalOf(503, { code: "fleet_full", detail: "No room." }))).toMatch(/Wait/);
    expect(refusalText("list", refusalOf(401, { code: "unauthorized", detail: "Token revoked." }))).toMatch(
      /API tokens/,
    );
  });

  it("copes with a body that is not Baton's error shape", () => {
    expect(refusalText("read", refusalOf(502, "bad gateway"))).toContain("Could not read: bad gateway [HTTP 502]");
    expect(refusalText("read", refusalOf(500, null))).toContain("Could not read: HTTP 500 [HTTP 500]");
  });
});
