import { describe, expect, it } from "vitest";
import { attemptsText, deliveryLabel, deliveryTone, outcomeText, prettyBody } from "../../components/webhooks/delivery";
import {
  describeEventTypes,
  eventTypesFor,
  groupEventTypes,
  SUBSCRIBABLE_EVENT_TYPES,
} from "../../components/webhooks/event-types";
import fs from "node:fs";
import { withoutSecret } from "../../lib/queries/webhooks";
import { webhookPatch } from "../../components/webhooks/patch";

describe("a delivery on screen", () => {
  it("names a pending delivery that already failed once 'retrying', in the warning tone", () => {
    expect(deliveryLabel({ status: "pending", attempts: 0 })).toBe("pending");
    expect(deliveryTone({ status: "pending", attempts: 0 })).toBe("pending");
    expect(deliveryLabel({ status: "pending", attempts: 1 })).toBe("retrying");
    expect(deliveryTone({ status: "pending", attempts: 1 })).toBe("warning");
    expect(deliveryTone({ status: "failed" })).toBe("destructive");
    expect(deliveryTone({ status: "succeeded" })).toBe("success");
    expect(deliveryLabel({ status: "weird" })).toBe("weird");
  });

  it("says what the receiver answered, or that nothing answered", () => {
    expect(outcomeText({ response_status: 204 })).toBe("HTTP 204");
    expect(outcomeText({ response_status: 500 })).toBe("HTTP 500 (not 2xx)");
    expect(outcomeText({ response_status: null, error: "ENOTFOUND", attempts: 1 })).toBe("no answer");
    expect(outcomeText({ attempts: 0 })).toBe("not sent yet");
    expect(attemptsText({ attempts: 2, max_attempts: 4 })).toBe("2 of 4");
  });

  it("pretty-prints JSON bodies and shows anything else as it came", () => {
    expect(prettyBody('{"id":"evt_1","data":{"a":1}}')).toBe('{\n  "id": "evt_1",\n  "data": {\n    "a": 1\n  }\n}');
    // A response excerpt cut at 2 KiB is not JSON any more.
    expect(prettyBody('{"partial": "x')).toBe('{"partial": "x');
    expect(prettyBody(null)).toBe("");
  });
});

describe("event types", () => {
  it("are the engine's documented list (docs/openapi.json, generated from its validation), without webhook.test", () => {
    const doc = JSON.parse(fs.readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8")) as {
      paths: Record<
        string,
        {
          post: {
            requestBody: {
              content: Record<string, { schema: { properties: Record<string, { items: { enum: string[] } }> } }>;
            };
          };
        }
      >;
    };
    const documented =
      doc.paths["/v1/webhooks"]!.post.requestBody.content["application/json"]!.schema.properties.event_types!.items
        .enum;
    expect([...SUBSCRIBABLE_EVENT_TYPES, "webhook.test"]).toEqual(documented);
    expect(groupEventTypes().map(([g]) => g)).toEqual(["sandbox", "template", "volume", "snapshot"]);
  });

  it("send nothing for 'all' (future types included), the picks in the contract's order, or null for none", () => {
    expect(eventTypesFor("all", new Set(["sandbox.paused"]))).toBeUndefined();
    expect(eventTypesFor("some", new Set(["volume.moved", "sandbox.paused"]))).toEqual([
      "sandbox.paused",
      "volume.moved",
    ]);
    expect(eventTypesFor("some", new Set())).toBeNull();
  });

  it("read 'All events' for a webhook subscribed to every type", () => {
    expect(describeEventTypes([...SUBSCRIBABLE_EVENT_TYPES])).toBe("All events");
    expect(describeEventTypes(["sandbox.paused", "volume.moved"])).toBe("sandbox.paused, volume.moved");
  });
});

describe("a webhook put in the cache", () => {
  it("never carries its secret", () => {
    const w = withoutSecret({ id: "wh_1", url: "https://x", secret: "whsec_abc" });
    expect(w).toEqual({ id: "wh_1", url: "https://x" });
    expect(JSON.stringify(w)).not.toContain("whsec_");
  });
});

describe("an edit's PATCH", () => {
  const current = { url: "https://a.example/x", event_types: ["sandbox.paused"], description: "billing" };
  it("carries only what changed", () => {
    expect(
      webhookPatch(current, { url: "https://a.example/x", event_types: ["sandbox.paused"], description: "billing" }),
    ).toEqual({});
    expect(
      webhookPatch(current, { url: "https://b.example/y", event_types: ["sandbox.paused"], description: "billing" }),
    ).toEqual({
      url: "https://b.example/y",
    });
  });
  it("sends 'all events' as the whole list and a cleared description as an empty string", () => {
    expect(webhookPatch(current, { url: current.url, description: "billing" })).toEqual({
      event_types: [...SUBSCRIBABLE_EVENT_TYPES],
    });
    expect(webhookPatch(current, { url: current.url, event_types: ["sandbox.paused"] })).toEqual({ description: "" });
    // The same types in another order are no change.
    expect(
      webhookPatch(
        { ...current, event_types: ["volume.moved", "sandbox.paused"] },
        { url: current.url, event_types: ["sandbox.paused", "volume.moved"], description: "billing" },
      ),
    ).toEqual({});
  });
});
