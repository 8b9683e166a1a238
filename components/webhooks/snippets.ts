// Each webhook action as code (Python, JavaScript, curl), built from lib/code/snippet.ts. None holds a
// token or a signing secret: they read ORKESTR_API_KEY and ORKESTR_WEBHOOK_SECRET from the
// environment of whoever runs them.
//
// The SDK's README documents Webhook.create, list, enable and delete (and verify_webhook_signature):
// those actions use the SDK. Update, disable, rotate-secret, test, the delivery log and redeliver are
// not in it, so their Python and JavaScript tabs call the REST API directly rather than name SDK methods
// that may not exist.

import {
  apiUrl,
  baseUrlNote,
  curlRequest,
  HOSTED_API,
  jsOptions,
  jsValue,
  pyKwargs,
  pyValue,
  str,
  type Snippets,
} from "../../lib/code/snippet";
import { path } from "../../lib/orkestr/path";

export interface CreateInput {
  url: string;
  /** Omitted: every event. */
  event_types?: readonly string[];
  description?: string;
}

const SDK_NOTE_PY = "# The API key comes from ORKESTR_API_KEY.\n";
const SDK_NOTE_JS = "// The API key comes from ORKESTR_API_KEY.\n";
const DIRECT_PY = "# Not in the SDK's README: a direct API call.\n";
const DIRECT_JS = "// Not in the SDK's README: a direct API call.\n";

function v1(baseUrl: string, p: string): string {
  return apiUrl(baseUrl, `/v1${p}` as `/v1/${string}`);
}

/** A call the SDK does not document, as requests / fetch / curl against the REST API. */
function direct(
  baseUrl: string,
  method: "GET" | "POST" | "PATCH",
  p: string,
  { query = "", body }: { query?: string; body?: Record<string, unknown> } = {},
): Snippets {
  const url = `${v1(baseUrl, p)}${query}`;
  return {
    python: [
      "import os\n",
      "import requests\n\n",
      DIRECT_PY,
      `r = requests.${method.toLowerCase()}(\n`,
      `    ${str(url)},\n`,
      '    headers={"Authorization": f"Bearer {os.environ[\'ORKESTR_API_KEY\']}"},\n',
      body ? `    json=${pyValue(body)},\n` : "",
      "    timeout=30,\n",
      ")\n",
      "r.raise_for_status()\n",
      "print(r.json())\n",
    ].join(""),
    javascript: [
      DIRECT_JS,
      `const res = await fetch(${str(url)}, {\n`,
      method === "GET" ? "" : `  method: ${str(method)},\n`,
      body
        ? '  headers: { Authorization: `Bearer ${process.env.ORKESTR_API_KEY}`, "Content-Type": "application/json" },\n'
        : "  headers: { Authorization: `Bearer ${process.env.ORKESTR_API_KEY}` },\n",
      body ? `  body: JSON.stringify(${jsValue(body)}),\n` : "",
      "});\n",
      "if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`);\n",
      "console.log(await res.json());\n",
    ].join(""),
    curl: curlRequest({ method, url, body }),
  };
}

/** The create request's body as the API takes it (unset fields left out). */
export function createBody(input: CreateInput): { url: string; event_types?: string[]; description?: string } {
  return {
    url: input.url,
    ...(input.event_types ? { event_types: [...input.event_types] } : {}),
    ...(input.description ? { description: input.description } : {}),
  };
}

export function createSnippets(input: CreateInput, baseUrl: string = HOSTED_API): Snippets {
  const kwargs = pyKwargs({ event_types: input.event_types, description: input.description || undefined });
  const options = jsOptions({ event_types: input.event_types, description: input.description || undefined });
  return {
    python: [
      "from orkestr import Webhook\n\n",
      SDK_NOTE_PY,
      baseUrlNote(baseUrl, "#"),
      `whk = Webhook.create(${str(input.url)}${kwargs ? `, ${kwargs}` : ""})\n`,
      "# The whsec_ secret is in this answer only: store it now.\n",
      "save_secret(whk.id, whk.secret)\n",
    ].join(""),
    javascript: [
      'import { Webhook } from "orkestr";\n\n',
      SDK_NOTE_JS,
      baseUrlNote(baseUrl, "//"),
      `const whk = await Webhook.create(${str(input.url)}${options === "{}" ? "" : `, ${options}`});\n`,
      "// The whsec_ secret is in this answer only: store it now.\n",
      "await saveSecret(whk.id, whk.secret);\n",
    ].join(""),
    curl: curlRequest({ method: "POST", url: v1(baseUrl, "/webhooks"), body: createBody(input), idempotent: true }),
  };
}

export function listSnippets(baseUrl: string = HOSTED_API): Snippets {
  return {
    python: [
      "from orkestr import Webhook\n\n",
      SDK_NOTE_PY,
      baseUrlNote(baseUrl, "#"),
      "for whk in Webhook.list():  # never with secrets\n",
      "    print(whk.id, whk.url, whk.enabled)\n",
    ].join(""),
    javascript: [
      'import { Webhook } from "orkestr";\n\n',
      SDK_NOTE_JS,
      baseUrlNote(baseUrl, "//"),
      "for (const whk of await Webhook.list()) console.log(whk.id, whk.url, whk.enabled); // never with secrets\n",
    ].join(""),
    curl: curlRequest({ method: "GET", url: v1(baseUrl, "/webhooks") }),
  };
}

/** Enable goes through the SDK; disable is a direct call (see the file's comment). */
export function setEnabledSnippets(id: string, enabled: boolean, baseUrl: string = HOSTED_API): Snippets {
  if (!enabled) return direct(baseUrl, "POST", path`/webhooks/${id}/disable`);
  return {
    python: [
      "from orkestr import Webhook\n\n",
      SDK_NOTE_PY,
      baseUrlNote(baseUrl, "#"),
      `Webhook.enable(${str(id)})  # also re-arms after an auto-disable\n`,
    ].join(""),
    javascript: [
      'import { Webhook } from "orkestr";\n\n',
      SDK_NOTE_JS,
      baseUrlNote(baseUrl, "//"),
      `await Webhook.enable(${str(id)}); // also re-arms after an auto-disable\n`,
    ].join(""),
    curl: curlRequest({ method: "POST", url: v1(baseUrl, path`/webhooks/${id}/enable`) }),
  };
}

export function deleteSnippets(id: string, baseUrl: string = HOSTED_API): Snippets {
  return {
    python: [
      "from orkestr import Webhook\n\n",
      SDK_NOTE_PY,
      baseUrlNote(baseUrl, "#"),
      `Webhook.delete(${str(id)})  # with its delivery log\n`,
    ].join(""),
    javascript: [
      'import { Webhook } from "orkestr";\n\n',
      SDK_NOTE_JS,
      baseUrlNote(baseUrl, "//"),
      `await Webhook.delete(${str(id)}); // with its delivery log\n`,
    ].join(""),
    curl: curlRequest({ method: "DELETE", url: v1(baseUrl, path`/webhooks/${id}`) }),
  };
}

/** PATCH: only the fields that change (the SDK's README has no update, so a direct call). */
export function updateSnippets(id: string, patch: Record<string, unknown>, baseUrl: string = HOSTED_API): Snippets {
  return direct(baseUrl, "PATCH", path`/webhooks/${id}`, { body: patch });
}

export function rotateSnippets(id: string, baseUrl: string = HOSTED_API): Snippets {
  return direct(baseUrl, "POST", path`/webhooks/${id}/rotate-secret`);
}

export function testSnippets(id: string, baseUrl: string = HOSTED_API): Snippets {
  return direct(baseUrl, "POST", path`/webhooks/${id}/test`);
}

export function deliveriesSnippets(id: string, baseUrl: string = HOSTED_API): Snippets {
  return direct(baseUrl, "GET", path`/webhooks/${id}/deliveries`, { query: "?limit=20" });
}

export function redeliverSnippets(id: string, dlv: string, baseUrl: string = HOSTED_API): Snippets {
  return direct(baseUrl, "POST", path`/webhooks/${id}/deliveries/${dlv}/redeliver`);
}

/**
 * How a receiver checks a delivery (the engine signs with engine/src/services/webhooks/signing.ts):
 * `X-Orkestr-Signature: sha256=<hex HMAC-SHA256 of the raw body>`, keyed by the whole `whsec_…`
 * string as UTF-8. Only the body is signed, so freshness and deduplication read the body too.
 */
export function verifySnippets(): Snippets {
  return {
    python: `import hashlib
import hmac
import json
import os
from datetime import datetime, timezone

SECRET = os.environ["ORKESTR_WEBHOOK_SECRET"]  # the whsec_... shown once, at create or rotate
TOLERANCE_SECONDS = 300


def verify(raw_body: bytes, signature: str | None) -> dict | None:
    """The event if the delivery is genuine and fresh; None means answer 401."""
    expected = "sha256=" + hmac.new(SECRET.encode(), raw_body, hashlib.sha256).hexdigest()
    # Constant time, over the raw bytes as received (never re-serialised JSON).
    if not signature or not hmac.compare_digest(expected, signature.strip().lower()):
        return None
    event = json.loads(raw_body)
    created = datetime.fromisoformat(event["created_at"].replace("Z", "+00:00"))
    # Only the body is signed: its created_at, not a header, says how old the event is. A redelivery
    # re-sends the original body, so widen this window if you redeliver old events.
    if abs((datetime.now(timezone.utc) - created).total_seconds()) > TOLERANCE_SECONDS:
        return None
    return event  # deduplicate on event["id"]: retries and redeliveries carry the same one


# The SDK has the signature check built in:
#   from orkestr import verify_webhook_signature
#   verify_webhook_signature(SECRET, raw_body, request.headers["X-Orkestr-Signature"])
`,
    javascript: `import { createHmac, timingSafeEqual } from "node:crypto";

const SECRET = process.env.ORKESTR_WEBHOOK_SECRET; // the whsec_... shown once, at create or rotate
const TOLERANCE_MS = 5 * 60_000;

/** The event if the delivery is genuine and fresh; null means answer 401. rawBody: a Buffer, as received. */
export function verify(rawBody, signature) {
  const expected = Buffer.from("sha256=" + createHmac("sha256", SECRET).update(rawBody).digest("hex"));
  const given = Buffer.from(String(signature ?? "").trim().toLowerCase());
  // Constant time, over the raw bytes as received (never re-serialised JSON).
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const event = JSON.parse(rawBody.toString("utf8"));
  // Only the body is signed: its created_at, not a header, says how old the event is. A redelivery
  // re-sends the original body, so widen this window if you redeliver old events.
  if (!(Math.abs(Date.now() - Date.parse(event.created_at)) <= TOLERANCE_MS)) return null;
  return event; // deduplicate on event.id: retries and redeliveries carry the same one
}

// Express: read the body raw, or the signature cannot be checked.
// app.post("/hooks/orkestr", express.raw({ type: "application/json" }), (req, res) => {
//   const event = verify(req.body, req.get("X-Orkestr-Signature"));
//   if (!event) return res.sendStatus(401);
//   res.sendStatus(204);
// });
`,
    curl: `# No request to make: check a saved delivery by hand. body.json holds the raw body, byte for
# byte as received; SIGNATURE the X-Orkestr-Signature header's value.
expected="sha256=$(openssl dgst -sha256 -hmac "$ORKESTR_WEBHOOK_SECRET" -r < body.json | cut -d' ' -f1)"
if [ "$expected" = "$SIGNATURE" ]; then echo "signature matches"; else echo "signature does NOT match"; fi
`,
  };
}
