import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  createSnippets,
  deleteSnippets,
  deliveriesSnippets,
  listSnippets,
  redeliverSnippets,
  rotateSnippets,
  setEnabledSnippets,
  testSnippets,
  verifySnippets,
} from "../../components/webhooks/snippets";
import { signBody } from "../../engine/src/services/webhooks/signing";

const LOCAL = "http://127.0.0.1:8787/v1";
const SECRET = "whsec_test_0123456789abcdefghijklmn";

describe("webhook action snippets", () => {
  it("create: the SDK call with only what was set, and curl with an Idempotency-Key and the body", () => {
    const s = createSnippets({ url: "https://hooks.example.com/o", event_types: ["sandbox.paused"], description: "" });
    expect(s.python).toContain('Webhook.create("https://hooks.example.com/o", event_types=["sandbox.paused"])');
    expect(s.javascript).toContain('Webhook.create("https://hooks.example.com/o", { eventTypes: ["sandbox.paused"] })');
    expect(s.curl).toContain('curl -X POST "https://api.orkestr.eu/v1/webhooks"');
    expect(s.curl).toContain("Idempotency-Key");
    expect(s.curl).toContain('"event_types": [\n    "sandbox.paused"\n  ]');
    expect(s.curl).not.toContain("description");
    // All events: event_types is left out, which the API reads as every type, now and later.
    expect(createSnippets({ url: "https://h.example.com" }).python).toContain(
      'Webhook.create("https://h.example.com")\n',
    );
  });

  it("names the connection's server when it is not the hosted API", () => {
    const s = createSnippets({ url: "https://h.example.com" }, LOCAL);
    expect(s.python).toContain("This console talks to http://127.0.0.1:8787/v1");
    expect(s.curl).toContain('"http://127.0.0.1:8787/v1/webhooks"');
  });

  it("each action reaches its route, the id encoded into one path segment", () => {
    const id = "wh_1/../x";
    const enc = "wh_1%2F..%2Fx";
    expect(setEnabledSnippets(id, true, LOCAL).curl).toContain(`/v1/webhooks/${enc}/enable"`);
    expect(setEnabledSnippets(id, true).python).toContain(`Webhook.enable("${id}")`);
    expect(setEnabledSnippets(id, false, LOCAL).curl).toContain(
      `-X POST "http://127.0.0.1:8787/v1/webhooks/${enc}/disable"`,
    );
    expect(rotateSnippets(id, LOCAL).python).toContain(
      `requests.post(\n    "http://127.0.0.1:8787/v1/webhooks/${enc}/rotate-secret"`,
    );
    expect(testSnippets(id, LOCAL).javascript).toContain(
      `fetch("http://127.0.0.1:8787/v1/webhooks/${enc}/test", {\n  method: "POST"`,
    );
    expect(deliveriesSnippets(id, LOCAL).curl).toBe(
      `curl "http://127.0.0.1:8787/v1/webhooks/${enc}/deliveries?limit=20" \\\n  -H "Authorization: Bearer $ORKESTR_API_KEY"\n`,
    );
    expect(redeliverSnippets(id, "dlv_9", LOCAL).curl).toContain(`/webhooks/${enc}/deliveries/dlv_9/redeliver"`);
    expect(deleteSnippets(id, LOCAL).curl).toContain(`curl -X DELETE "http://127.0.0.1:8787/v1/webhooks/${enc}"`);
    expect(listSnippets(LOCAL).python).toContain("Webhook.list()");
  });

  it("never carry a token or a secret: both come from the environment", () => {
    const all = [
      createSnippets({ url: "https://h.example.com" }),
      listSnippets(),
      setEnabledSnippets("wh_1", false),
      rotateSnippets("wh_1"),
      verifySnippets(),
    ].flatMap((s) => Object.values(s));
    for (const code of all) {
      expect(code).not.toMatch(/whsec_[A-Za-z0-9]/);
      expect(code).not.toMatch(/ork_[A-Za-z0-9]/);
    }
    expect(rotateSnippets("wh_1").python).toContain("os.environ['ORKESTR_API_KEY']");
    expect(rotateSnippets("wh_1").javascript).toContain("process.env.ORKESTR_API_KEY");
  });
});

// The verification snippets run for real, against bodies signed by the engine's own signBody.
describe("the signature verification snippets, run", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-verify-"));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const env = { ...process.env, ORKESTR_WEBHOOK_SECRET: SECRET };
  const snippets = verifySnippets();
  fs.writeFileSync(path.join(dir, "verify_snippet.py"), snippets.python);
  fs.writeFileSync(path.join(dir, "verify-snippet.mjs"), snippets.javascript);
  fs.writeFileSync(path.join(dir, "check.sh"), snippets.curl);

  const event = (createdAt: Date) =>
    JSON.stringify({ id: "evt_1", type: "webhook.test", created_at: createdAt.toISOString(), data: { n: "é" } });
  const fresh = event(new Date());
  const stale = event(new Date(Date.now() - 10 * 60_000));
  const cases: [string, string, string, string][] = [
    // name, body received, signature header, expected result
    ["genuine and fresh", fresh, signBody(SECRET, fresh), "evt_1"],
    ["body changed after signing", fresh.replace('"n"', '"m"'), signBody(SECRET, fresh), "none"],
    ["signed with another secret", fresh, signBody("whsec_other", fresh), "none"],
    ["no signature", fresh, "", "none"],
    ["genuine but stale", stale, signBody(SECRET, stale), "none"],
  ];

  function python(body: string, sig: string): string {
    fs.writeFileSync(path.join(dir, "body.json"), body);
    const harness = [
      "import sys",
      "from verify_snippet import verify",
      "e = verify(open('body.json', 'rb').read(), sys.argv[1] or None)",
      "print(e['id'] if e else 'none')",
    ].join("\n");
    return execFileSync("python3", ["-c", harness, sig], { cwd: dir, env, encoding: "utf8" }).trim();
  }

  function javascript(body: string, sig: string): string {
    fs.writeFileSync(path.join(dir, "body.json"), body);
    const harness = `import { verify } from "./verify-snippet.mjs"; import fs from "node:fs";
      const e = verify(fs.readFileSync("body.json"), process.argv[1] || null); console.log(e ? e.id : "none");`;
    return execFileSync(process.execPath, ["--input-type=module", "-e", harness, sig], {
      cwd: dir,
      env,
      encoding: "utf8",
    }).trim();
  }

  it.each(cases)("Python: %s", (_name, body, sig, expected) => {
    expect(python(body, sig)).toBe(expected);
  });

  it.each(cases)("JavaScript: %s", (_name, body, sig, expected) => {
    expect(javascript(body, sig)).toBe(expected);
  });

  it("the shell check with openssl agrees with the engine's signature, and notices a changed body", () => {
    const run = (body: string, sig: string) => {
      fs.writeFileSync(path.join(dir, "body.json"), body);
      return execFileSync("bash", ["check.sh"], { cwd: dir, env: { ...env, SIGNATURE: sig }, encoding: "utf8" }).trim();
    };
    expect(run(fresh, signBody(SECRET, fresh))).toBe("signature matches");
    expect(run(fresh + " ", signBody(SECRET, fresh))).toBe("signature does NOT match");
  });
});
