import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module script without type declarations
import { engineWebhookAllow } from "../../scripts/supervisor.mjs";
import { connectPlan, parseWebhookAllow, receiverUrlProblem } from "../../engine/src/services/webhook-guard";

// What `npm start` gives the engine as ORKESTR_ENGINE_WEBHOOK_ALLOW: the console's own receiver
// (`/api/hooks/` on its loopback listener, or on BATON_URL when set), the operator's list kept, and
// nothing else: not the console's whole origin.

describe("engineWebhookAllow", () => {
  it("allows the receiver path of the console's loopback listener on its port", () => {
    expect(engineWebhookAllow({ PORT: "4123" })).toBe("http://127.0.0.1:4123/api/hooks/");
    expect(engineWebhookAllow({})).toBe("http://127.0.0.1:3000/api/hooks/");
  });

  it("allows BATON_URL's receiver path instead when it is set (the only name the console then answers)", () => {
    expect(engineWebhookAllow({ PORT: "3000", BATON_URL: "https://baton.example.com/" })).toBe(
      "https://baton.example.com/api/hooks/",
    );
  });

  it("keeps the operator's entries and adds the console's once", () => {
    expect(
      engineWebhookAllow({
        PORT: "3000",
        ORKESTR_ENGINE_WEBHOOK_ALLOW: "http://10.0.0.5:9000, http://127.0.0.1:3000/api/hooks/",
      }),
    ).toBe("http://10.0.0.5:9000,http://127.0.0.1:3000/api/hooks/");
  });

  it("is a list the engine's guard accepts", () => {
    expect(
      parseWebhookAllow(engineWebhookAllow({ PORT: "3000", ORKESTR_ENGINE_WEBHOOK_ALLOW: "https://hooks.example" })),
    ).toEqual(["https://hooks.example", "http://127.0.0.1:3000/api/hooks/"]);
  });

  it("lets a tenant's webhook reach the console's receiver, and not its sign-in or setup pages", () => {
    for (const env of [{ PORT: "3000" }, { PORT: "3000", BATON_URL: "http://baton.internal:8080" }]) {
      const allow = parseWebhookAllow(engineWebhookAllow(env));
      const origin = env.BATON_URL ?? "http://127.0.0.1:3000";
      expect(receiverUrlProblem(`${origin}/api/hooks/rcv_1`, allow)).toBeNull();
      for (const path of ["/login", "/api/setup", "/api/auth/session", "/"]) {
        expect(receiverUrlProblem(`${origin}${path}`, allow), path).not.toBeNull();
        expect(connectPlan(new URL(`${origin}${path}`), allow).refused, path).toMatch(/^refused: /);
      }
    }
  });
});
