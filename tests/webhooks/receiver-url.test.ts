import { describe, expect, it } from "vitest";
import { checkReceiverUrl, MAX_URL_LENGTH, refusalText } from "../../components/webhooks/receiver-url";
import { receiverUrlProblem } from "../../engine/src/services/webhook-guard";

const PUBLIC = new Set(["203.0.113.9"]);

describe("the create form's receiver URL check", () => {
  it.each([
    ["", "Enter the URL"],
    ["   ", "Enter the URL"],
    ["hooks.example.com/x", "Start with https://"],
    ["https//hooks.example.com", "Start with https://"],
    ["ftp://hooks.example.com/x", "must start with https://, not ftp://"],
    ["javascript:alert(1)", "must start with https://"],
    ["https://hooks.example.com/x#frag", "#fragment"],
    [`https://h.example.com/${"a".repeat(MAX_URL_LENGTH)}`, "at most 2048"],
  ])("%j is refused with a sentence that says what to do", (raw, words) => {
    const r = checkReceiverUrl(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toContain(words);
  });

  it("accepts a public https URL (trimmed) with no note", () => {
    expect(checkReceiverUrl("  https://hooks.example.com/orkestr?x=1 ")).toEqual({
      ok: true,
      url: "https://hooks.example.com/orkestr?x=1",
      note: null,
    });
  });

  it("leaves plain http and internal addresses to the engine, with a note for http", () => {
    // The operator may allow Baton's own origin: the browser cannot know, so it sends and shows the answer.
    const http = checkReceiverUrl("http://127.0.0.1:3000/api/hooks/x");
    expect(http).toMatchObject({ ok: true });
    if (http.ok) expect(http.note).toMatch(/operator allowed/);
    const creds = checkReceiverUrl("https://user:pw@hooks.example.com/");
    expect(creds.ok && creds.note).toMatch(/stored and listed/);
  });

  it("agrees with the engine's guard: what the browser refuses for its scheme the engine refuses too, and a public https URL passes both", () => {
    for (const raw of ["ftp://hooks.example.com/x", "file:///etc/passwd", "not a url"]) {
      expect(checkReceiverUrl(raw).ok).toBe(false);
      expect(receiverUrlProblem(raw, [], { ownAddresses: PUBLIC })).not.toBeNull();
    }
    for (const raw of ["https://hooks.example.com/orkestr", "https://example.invalid/hook"]) {
      expect(checkReceiverUrl(raw).ok).toBe(true);
      expect(receiverUrlProblem(raw, [], { ownAddresses: PUBLIC })).toBeNull();
    }
  });

  it("shows the engine's refusal as its reason, without the framing", () => {
    const problem = receiverUrlProblem("http://127.0.0.1:9/x", [], { ownAddresses: PUBLIC })!;
    expect(refusalText(`Invalid request: url: ${problem}`)).toBe(problem);
    expect(refusalText(problem)).toMatch(/^127\.0\.0\.1 is a loopback address/);
  });
});
