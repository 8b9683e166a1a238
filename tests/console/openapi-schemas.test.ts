import fs from "node:fs";
import type { OpenAPIV3_1 } from "openapi-types";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as consoleSchemas from "../../lib/orkestr/schemas/index";

/**
 * The console's response schemas (lib/orkestr/schemas) read what the engine documents in the
 * committed docs/openapi.json, which engine/test/inject/openapi.test.ts keeps equal to what the
 * engine's route schemas generate: a field renamed on either side fails one of the two.
 */
const doc = JSON.parse(
  fs.readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8"),
) as OpenAPIV3_1.Document;

type Json = Record<string, unknown>;
/** The object schema of a response (array items and anyOf branches merged), $refs resolved. */
function shape(s: unknown, components: Record<string, unknown>): { props: Set<string>; required: Set<string> } {
  const props = new Set<string>();
  const required = new Set<string>();
  const visit = (x: unknown, inUnion: boolean) => {
    let n = x as Json;
    while (n?.$ref) n = components[String(n.$ref).split("/").pop()!] as Json;
    if (!n) return;
    if (n.type === "array") return visit(n.items, inUnion);
    for (const b of (n.anyOf ?? n.oneOf ?? []) as unknown[]) visit(b, true);
    for (const k of Object.keys((n.properties as Json) ?? {})) props.add(k);
    if (!inUnion) for (const k of (n.required as string[]) ?? []) required.add(k);
  };
  visit(s, false);
  return { props, required };
}

/**
 * Each contract route the console reads, with the console's schema for its answer and the fields
 * the console knows of (from the contract or the seed) that this engine does not send.
 */
const CONSOLE: [string, z.ZodType, string[]][] = [
  ["GET /v1/sandboxes/{id}", consoleSchemas.Sandbox, []],
  ["GET /v1/sandboxes", consoleSchemas.Sandbox, []],
  ["POST /v1/sandboxes/{id}/timeout", consoleSchemas.SetTimeoutResult, []],
  ["POST /v1/sandboxes/{id}/exec", consoleSchemas.ExecResult, []],
  ["GET /v1/sandboxes/limits", consoleSchemas.Limits, []],
  ["GET /v1/sandboxes/usage", consoleSchemas.Usage, []],
  ["GET /v1/sandboxes/{id}/metrics", consoleSchemas.Metrics, []],
  // The console also reads `created_at` where a provider names the event time so; this engine sends `t`.
  ["GET /v1/sandboxes/{id}/events", consoleSchemas.SandboxEvent, ["created_at"]],
  ["POST /v1/sandboxes/{id}/files", consoleSchemas.WrittenFile, []],
  ["POST /v1/sandboxes/{id}/files/batch", consoleSchemas.WriteBatchResult, []],
  ["POST /v1/sandboxes/{id}/files/presign-download", consoleSchemas.PresignedUrl, []],
  ["GET /v1/sandboxes/{id}/previews/{port}", consoleSchemas.Preview, []],
  ["POST /v1/sandboxes/{id}/preview-token", consoleSchemas.PreviewToken, []],
  ["GET /v1/sandboxes/{id}/pty/{pid}", consoleSchemas.PtySession, []],
  ["POST /v1/sandboxes/{id}/pty/{pid}/signal", consoleSchemas.PtySignalResult, []],
  ["GET /v1/snapshots/{id}", consoleSchemas.Snapshot, []],
  ["GET /v1/volumes/{id}", consoleSchemas.Volume, []],
  ["GET /v1/templates/{id}", consoleSchemas.Template, []],
  ["GET /v1/templates/{id}/logs", consoleSchemas.TemplateLogs, []],
  ["GET /v1/base-images", consoleSchemas.BaseImage, []],
  // One schema for every webhook answer: `secret` comes only from create and rotate-secret.
  ["GET /v1/webhooks/{id}", consoleSchemas.Webhook, ["secret"]],
  ["POST /v1/webhooks", consoleSchemas.Webhook, []],
  ["POST /v1/webhooks/{id}/rotate-secret", consoleSchemas.WebhookSecret, []],
  ["POST /v1/webhooks/{id}/test", consoleSchemas.WebhookTestResult, []],
  ["GET /v1/webhooks/{id}/deliveries/{dlv}", consoleSchemas.WebhookDelivery, []],
];

describe("the console's schemas read what the engine documents", () => {
  it.each(CONSOLE)("%s", (route, consoleSchema, notSent) => {
    const [method, p] = route.split(" ");
    const op = (doc.paths?.[p!] as Json | undefined)?.[method!.toLowerCase()] as OpenAPIV3_1.OperationObject;
    expect(op, `${route} is documented`).toBeDefined();
    const ok = Object.entries(op.responses ?? {}).find(([s]) => /^2\d\d$/.test(s))?.[1] as OpenAPIV3_1.ResponseObject;
    const engine = shape(ok?.content?.["application/json"]?.schema, doc.components?.schemas ?? {});
    const mine = shape(z.toJSONSchema(consoleSchema, { io: "output", unrepresentable: "any" }), {});
    // A field renamed on either side: the console names a field the engine does not document...
    const missing = [...mine.props].filter((k) => !engine.props.has(k) && !notSent.includes(k));
    expect(missing, `${route}: console fields the engine does not send`).toEqual([]);
    // ...or requires one the engine may leave out.
    const optional = [...mine.required].filter((k) => !engine.required.has(k));
    expect(optional, `${route}: console requires fields the engine may omit`).toEqual([]);
    // The allowance stays honest: a field listed as not sent is not sent.
    expect(
      notSent.filter((k) => engine.props.has(k)),
      route,
    ).toEqual([]);
  });
});
