import { apiUrl, baseUrlNote, curlRequest, str, type Snippets } from "../../lib/code/snippet";

// The receiver's actions as code (Python SDK, JS SDK, curl): what Baton ran on the user's behalf,
// so the same can be scripted. Never a token (ORKESTR_API_KEY from the environment) and never the
// secret, which Baton alone holds.

/** "Receive in Baton": the webhook it made. */
export function createReceiverCode(baseUrl: string, url: string): Snippets {
  return {
    python: [
      "from orkestr import Webhook\n\n",
      "# The API key comes from ORKESTR_API_KEY.\n",
      baseUrlNote(baseUrl, "#"),
      `whk = Webhook.create(${str(url)})  # every event type\n`,
      "# whk.secret (whsec_…) is shown only here: Baton stored its own encrypted.\n",
    ].join(""),
    javascript: [
      'import { Webhook } from "orkestr";\n\n',
      "// The API key comes from ORKESTR_API_KEY.\n",
      baseUrlNote(baseUrl, "//"),
      `const whk = await Webhook.create(${str(url)}); // every event type\n`,
      "// whk.secret (whsec_…) is shown only here: Baton stored its own encrypted.\n",
    ].join(""),
    curl: curlRequest({ method: "POST", url: apiUrl(baseUrl, "/v1/webhooks"), body: { url }, idempotent: true }),
  };
}

/** "Stop receiving": the webhook deleted (Baton also forgets its events). */
export function deleteReceiverCode(baseUrl: string, webhookId: string): Snippets {
  return {
    python: ["from orkestr import Webhook\n\n", baseUrlNote(baseUrl, "#"), `Webhook.delete(${str(webhookId)})\n`].join(
      "",
    ),
    javascript: [
      'import { Webhook } from "orkestr";\n\n',
      baseUrlNote(baseUrl, "//"),
      `await Webhook.delete(${str(webhookId)});\n`,
    ].join(""),
    curl: curlRequest({ method: "DELETE", url: apiUrl(baseUrl, `/v1/webhooks/${encodeURIComponent(webhookId)}`) }),
  };
}

/** "Send a test event": a webhook.test delivery to this webhook alone. */
export function testReceiverCode(baseUrl: string, webhookId: string): Snippets {
  const url = apiUrl(baseUrl, `/v1/webhooks/${encodeURIComponent(webhookId)}/test`);
  return {
    python: [
      "import os, httpx\n\n",
      "# The SDK has no call for this route: it is one POST.\n",
      `r = httpx.post(${str(url)}, headers={"Authorization": f"Bearer {os.environ['ORKESTR_API_KEY']}"})\n`,
      'print(r.json()["delivery_id"])\n',
    ].join(""),
    javascript: [
      "// The SDK has no call for this route: it is one POST.\n",
      `const r = await fetch(${str(url)}, {\n`,
      '  method: "POST",\n',
      "  headers: { Authorization: `Bearer ${process.env.ORKESTR_API_KEY}` },\n",
      "});\n",
      "console.log((await r.json()).delivery_id);\n",
    ].join(""),
    curl: curlRequest({ method: "POST", url }),
  };
}
