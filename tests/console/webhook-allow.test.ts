import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module script without type declarations
import { engineWebhookAllow } from "../../scripts/supervisor.mjs";
import { parseAllowedOrigins } from "../../engine/src/services/webhook-guard";

// What `npm start` gives the engine as ORKESTR_ENGINE_WEBHOOK_ALLOW: the console's own origin (its
// loopback listener, or BATON_URL when set), the operator's list kept, and nothing else.

describe("engineWebhookAllow", () => {
  it("allows the console's loopback listener on its port", () => {
    expect(engineWebhookAllow({ PORT: "4123" })).toBe("http://127.0.0.1:4123");
    expect(engineWebhookAllow({})).toBe("http://127.0.0.1:3000");
  });

  it("allows BATON_URL's origin instead when it is set (the only name the console then answers)", () => {
    expect(engineWebhookAllow({ PORT: "3000", BATON_URL: "https://baton.example.com/" })).toBe(
      "https://baton.example.com",
    );
  });

  it("keeps the operator's origins and adds the console's once", () => {
    expect(
      engineWebhookAllow({ PORT: "3000", ORKESTR_ENGINE_WEBHOOK_ALLOW: "http://10.0.0.5:9000, http://127.0.0.1:3000" }),
    ).toBe("http://10.0.0.5:9000,http://127.0.0.1:3000");
  });

  it("is a list the engine's guard accepts", () => {
    expect(
      parseAllowedOrigins(engineWebhookAllow({ PORT: "3000", ORKESTR_ENGINE_WEBHOOK_ALLOW: "https://hooks.example" })),
    ).toEqual(["https://hooks.example", "http://127.0.0.1:3000"]);
  });
});
