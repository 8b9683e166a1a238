import { expect, test } from "./fixtures";

// Issue 4: the browser never sees an orkestr token. After connecting the local engine, adding a
// connection with a token this test knows (minted through the engine's /_admin/tokens) and using
// the proxy, nothing the browser can get holds that token or its middle part: not the console's
// HTML pages, not a JS chunk they reference, not any /api answer of the session. No whole ork_
// token of any kind (the local engine's included, which the test never learns) appears either.
test.use({ consoleInstance: "no-token-leak" });

const PAGES = [
  "/",
  "/sandboxes",
  "/volumes",
  "/snapshots",
  "/templates",
  "/webhooks",
  "/usage",
  "/team",
  "/settings",
  "/settings/connections",
  "/no/such/page",
];
/** A whole token; hints are "ork_…abcd" (an ellipsis, four characters). */
const ANY_TOKEN = /(?<![A-Za-z0-9_-])(ork|sp_live)_[A-Za-z0-9_-]{16,}/;

test("no token in any page, JS chunk or /api response of a session", async ({ signedIn: page, servers, baseURL }) => {
  test.setTimeout(120_000);
  const known = await servers.engine.mint(["sandboxes:read", "sandboxes:write"]);
  const secrets = [known, known.slice(4, -4), known.slice(8, -8)];

  // Every /api answer the page's code receives, read from a clone inside the page (Chromium's
  // protocol cannot hand over streamed bodies, and asking for them stalls the session).
  await page.addInitScript(() => {
    const w = window as unknown as { __apiBodies: Array<{ url: string; body: string }>; fetch: typeof fetch };
    w.__apiBodies = [];
    const original = w.fetch.bind(window);
    w.fetch = async (input, init) => {
      const response = await original(input, init);
      const url = new URL(
        typeof input === "string" ? input : input instanceof URL ? input.href : input.url,
        location.href,
      );
      if (url.pathname.startsWith("/api/") && !/event-stream|ndjson/.test(response.headers.get("content-type") ?? "")) {
        void response
          .clone()
          .text()
          .then((body) => w.__apiBodies.push({ url: url.pathname, body }));
      }
      return response;
    };
  });
  const apiUrlsSeen = new Set<string>();
  page.on("response", (response) => {
    const u = new URL(response.url());
    if (u.pathname.startsWith("/api/")) apiUrlsSeen.add(u.pathname);
  });
  const collectApiBodies = async () =>
    page.evaluate(() =>
      (window as unknown as { __apiBodies: Array<{ url: string; body: string }> }).__apiBodies.splice(0),
    );
  const apiBodies: Array<{ url: string; body: string }> = [];

  // Connect the local engine (one click), then add the known token through the form.
  await page.goto("/settings/connections");
  await page.getByRole("button", { name: "Use the local engine" }).click();
  await expect(page.getByRole("listitem", { name: "Connection Local engine" })).toBeVisible();
  const form = page.getByRole("form", { name: "Add a connection" });
  await form.getByLabel("Name").fill("Known token");
  await form.getByLabel("Base URL").fill(servers.engine.origin);
  await form.getByLabel("API token").fill(known);
  await form.getByRole("button", { name: "Add connection" }).click();
  const added = page.getByRole("listitem", { name: "Connection Known token" });
  await expect(added).toBeVisible();
  await added.getByRole("button", { name: "Set active" }).click();
  await expect(added.getByText("Active", { exact: true })).toBeVisible();

  // Use the proxy from the page, as the console's own code will.
  const results = await page.evaluate(async () => {
    const post = (url: string, body: unknown) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then(
        async (r) => ({ status: r.status, body: await r.text() }),
      );
    const created = await post("/api/v1/sandboxes", { template: "python-3.12" });
    const id = (JSON.parse(created.body) as { id: string }).id;
    const ran = await post(`/api/v1/sandboxes/${id}/exec`, { command: "echo hi" });
    const streamed = await post(`/api/v1/sandboxes/${id}/exec/stream`, { command: "echo streamed" });
    const listed = await fetch("/api/v1/sandboxes").then((r) => r.status);
    const limits = await fetch("/api/v1/sandboxes/limits").then((r) => r.status);
    const gone = await fetch(`/api/v1/sandboxes/${id}`, { method: "DELETE" }).then((r) => r.status);
    return {
      created: created.status,
      ran: ran.status,
      streamed: streamed.status,
      streamedBody: streamed.body,
      listed,
      limits,
      gone,
    };
  });
  expect(results).toMatchObject({ created: 201, ran: 200, streamed: 200, listed: 200, limits: 200, gone: 204 });
  expect(results.streamedBody).toContain("streamed");
  apiBodies.push({ url: "/api/v1/sandboxes/{id}/exec/stream (read in the page)", body: results.streamedBody });
  await page.waitForTimeout(200);
  apiBodies.push(...(await collectApiBodies()));

  // Every HTML page, and every JS chunk they reference, fetched by a fresh tab of the same session.
  const crawler = page;
  const documents: Array<{ url: string; body: string }> = [];
  const chunks = new Set<string>();
  for (const path of PAGES) {
    const response = await crawler.goto(path);
    expect(response, path).not.toBeNull();
    const html = await response!.text();
    documents.push({ url: path, body: html }, { url: `${path} (DOM)`, body: await crawler.content() });
    await page.waitForTimeout(100);
    apiBodies.push(...(await collectApiBodies()));
    for (const m of html.matchAll(/\/_next\/static\/[^"'\s\\)]+\.js/g)) chunks.add(m[0]);
  }
  expect(chunks.size).toBeGreaterThan(3);
  for (const chunk of chunks) {
    const r = await crawler.request.get(new URL(chunk, baseURL).toString());
    expect(r.status(), chunk).toBe(200);
    documents.push({ url: chunk, body: await r.text() });
  }
  const apiUrls = new Set(apiBodies.map((a) => a.url));
  expect([...apiUrlsSeen].every((u) => u.startsWith("/api/"))).toBe(true);
  for (const expected of [
    "/api/connections",
    "/api/connections/local-engine",
    "/api/connections/status",
    "/api/v1/sandboxes",
    "/api/v1/sandboxes/limits",
  ]) {
    expect([...apiUrls], expected).toContain(expected);
  }

  for (const { url, body } of [...documents, ...apiBodies]) {
    for (const secret of secrets)
      expect(body.includes(secret), `${url} contains the token (or part of it)`).toBe(false);
    expect(ANY_TOKEN.exec(body)?.[0] ?? null, `${url} contains a whole token`).toBeNull();
  }
});
