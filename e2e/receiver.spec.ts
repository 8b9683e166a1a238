import type { Browser, Page, Route } from "@playwright/test";
import http from "node:http";
import { seriousAxeViolations } from "./a11y";
import { expect, test, type Servers } from "./fixtures";
import { addMember, screenshot, signedInContext, watchForErrors, teamHref } from "./helpers";

// "Receive in Baton" against the real engine and the real console server, no mocked network: one
// click makes a webhook on the owner's local-engine connection that delivers to the console's own
// /api/hooks/<id> (the engine allows exactly that path prefix); sandbox events then appear in the feed,
// and the sandbox list takes a new status from the received event while its own reads are held. A
// forged delivery is refused with 401 and never shown. Its own console instance: it makes sandboxes
// and a receiver other specs must not see.
test.use({ consoleInstance: "receiver" });
test.describe.configure({ mode: "serial" });

async function checkA11yLightAndDark(page: Page, name: string) {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expect(page.locator("html")).toHaveClass(scheme === "dark" ? /dark/ : /^(?!.*dark)/);
    expect(await seriousAxeViolations(page), `axe on ${name} (${scheme})`).toEqual([]);
    await screenshot(page, `${name}-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: "light" });
}

test.afterEach(async ({ servers }, testInfo) => {
  if (testInfo.status !== testInfo.expectedStatus)
    await testInfo.attach("console.log", { body: servers.log().slice(-20_000), contentType: "text/plain" });
});

const feed = (page: Page) => page.getByTestId("event-feed");
const feedRow = (page: Page, type: string, sandboxId: string) =>
  feed(page).locator(`tr[data-event-type="${type}"]`).filter({ hasText: sandboxId });

let sandboxId = "";

/**
 * Opens `path` and waits until its tab listens to received events: the page's own stream (loaded
 * after hydration) has answered, and the console's reader has caught up (a probe stream's `ready`),
 * so an event recorded from now on is pushed to the tab.
 */
async function gotoListening(page: Page, path: string) {
  const bridge = page.waitForResponse((r) => new URL(r.url()).pathname === "/api/hooks/events/live");
  await page.goto(path);
  expect((await bridge).status()).toBe(200);
  await page.evaluate(
    () =>
      new Promise<void>((resolve) => {
        const probe = new EventSource("/api/hooks/events/live");
        probe.addEventListener("ready", () => {
          probe.close();
          resolve();
        });
      }),
  );
}

/** Holds every request matching `pattern` (not answered, not failed) until `release()`. */
async function holdRequests(page: Page, pattern: RegExp) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held = async (route: Route) => {
    await gate;
    await route.continue().catch(() => undefined);
  };
  await page.route(pattern, held);
  return async () => {
    release();
    await page.unroute(pattern, held);
  };
}

/** A teammate of the owner (e2e/seed/add-member.ts: same team, the local engine in its account), signed in. */
async function teammate(servers: Servers, browser: Browser, baseURL: string) {
  const mate = { email: "grace@example.com", password: "another long enough password" };
  addMember(servers, mate, "member");
  return signedInContext(browser, baseURL, mate);
}

interface DeliveryRecord {
  id: string;
  event_id: string;
  status: string;
  attempts: number;
  response_status: number | null;
  response_body_excerpt: string | null;
}

test("the events page's empty state offers Receive in Baton; one click makes the receiver", async ({
  connected: page,
}) => {
  const problems = watchForErrors(page);
  await page.goto("/events");
  await expect(page.getByRole("heading", { level: 1, name: "Events" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Baton is not receiving events yet" })).toBeVisible();
  await checkA11yLightAndDark(page, "events-empty");

  // The empty state's button (the header has the same one).
  await page.getByRole("main").getByRole("button", { name: "Receive in Baton" }).last().click();
  await expect(page.getByRole("heading", { name: "Receiving in Baton" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Waiting for the first event" })).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: "Live" })).toBeVisible();
  // The header's button is gone: there is a receiver now.
  await expect(page.getByRole("button", { name: "Receive in Baton" })).toHaveCount(0);

  // The browser never sees the secret: not in the receiver's answer, not in the page.
  const answer = await page.request.get("/api/hooks/receivers");
  const text = await answer.text();
  // (The page's code snippets name the prefix, "whsec_…": a secret is the prefix and its random part.)
  expect(text).not.toMatch(/whsec_[A-Za-z0-9_-]{8}/);
  expect(await page.content()).not.toMatch(/whsec_[A-Za-z0-9_-]{8}/);
  const { receiver } = JSON.parse(text) as { receiver: { url: string; webhook_id: string } };
  expect(receiver.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/hooks\/rcv_[A-Za-z0-9_-]{32}$/);
  expect(problems).toEqual([]);
});

test("on /webhooks, Baton's own receiver is marked, cannot be rotated, edited or deleted there, and its test event reaches the feed", async ({
  connected: page,
}) => {
  const problems = watchForErrors(page);
  const { receiver } = (await (await page.request.get("/api/hooks/receivers")).json()) as {
    receiver: { webhook_id: string };
  };
  await page.goto("/webhooks");
  // The header says it is receiving (the button made it on the Events page before).
  await expect(page.getByTestId("receiving-in-baton")).toBeVisible();
  const mark = page
    .getByTestId("webhook-row")
    .filter({ hasText: receiver.webhook_id })
    .getByTestId("batons-receiver-mark");
  await expect(mark).toContainText("Baton's receiver");
  await expect(mark).toContainText("Yours");
  await page.goto(`/webhooks/${receiver.webhook_id}`);
  await expect(page.getByTestId("batons-receiver")).toContainText("Baton's own receiver");
  const actions = page.getByTestId("webhook-actions");
  await expect(actions.getByRole("button", { name: /Rotate secret/ })).toHaveCount(0);
  await expect(actions.getByRole("button", { name: /Delete/ })).toHaveCount(0);
  await expect(actions.getByRole("button", { name: /Edit/ })).toHaveCount(0);
  await expect(
    page
      .getByTestId("action-code-select")
      .locator("option")
      .filter({ hasText: /Rotate|Delete/ }),
  ).toHaveCount(0);
  await checkA11yLightAndDark(page, "receiver-own-webhook");
  await actions.getByRole("button", { name: "Send test" }).click();
  // Queued (the toast says so) before the page is left: leaving would cancel the request.
  await expect(page.getByText("Test delivery queued")).toBeVisible();
  await page.goto("/events");
  await expect(feed(page).locator('tr[data-event-type="webhook.test"]').first()).toBeVisible();
  expect(problems).toEqual([]);
});

test("a sandbox's events appear in the feed, live, with a link to it and the delivery id", async ({
  connected: page,
  baseURL,
}) => {
  const problems = watchForErrors(page);
  await page.goto("/events");
  await expect(page.getByRole("status").filter({ hasText: "Live" })).toBeVisible();
  const created = await page.request.post("/api/v1/sandboxes", {
    data: { template: "python-3.12", timeout_seconds: 900, metadata: { suite: "receiver" } },
    headers: { origin: baseURL! },
  });
  expect(created.status(), await created.text()).toBe(201);
  sandboxId = ((await created.json()) as { id: string }).id;

  // No reload: the row arrives through the live stream.
  const row = feedRow(page, "sandbox.created", sandboxId);
  await expect(row).toBeVisible();
  await expect(row.getByRole("link", { name: sandboxId })).toHaveAttribute("href", teamHref(`/sandboxes/${sandboxId}`));
  await expect(row).toContainText(/dlv_/);
  await expect(row.getByText("Verified")).toBeVisible();
  expect(problems).toEqual([]);
});

test("the sandbox list shows a status change from the received event, its own reads held back", async ({
  connected: page,
  servers,
}) => {
  const problems = watchForErrors(page);
  await gotoListening(page, "/sandboxes");
  const listRow = page.locator(`[role=row][data-sandbox-id="${sandboxId}"]`);
  await expect(listRow).toContainText("running");

  // From here the list's own reads (its poll and any refresh) wait until the end of the test, so
  // the new status can only come from the received event. The requests are held, not answered.
  const release = await holdRequests(page, /\/api\/v1\/sandboxes\?/);
  try {
    // Paused by another client (the engine's API directly), so no mutation in this page knows of it.
    const paused = await servers.engine.api("POST", `/sandboxes/${sandboxId}/pause`);
    expect(paused.status).toBe(200);
    await expect(listRow).toContainText("paused");
  } finally {
    await release();
  }
  expect(problems).toEqual([]);
});

test("the feed filters by type and pauses; light and dark", async ({ connected: page, servers }) => {
  const problems = watchForErrors(page);
  await page.goto("/events");
  await expect(feedRow(page, "sandbox.paused", sandboxId)).toBeVisible();
  await expect(feedRow(page, "sandbox.created", sandboxId)).toBeVisible();

  await page.getByLabel("Event type").selectOption("sandbox.paused");
  await expect(page).toHaveURL(/\/events\?(?:team=[a-z0-9-]+&)?type=sandbox\.paused(?:&team=[a-z0-9-]+)?$/);
  await expect(feedRow(page, "sandbox.created", sandboxId)).toHaveCount(0);
  await expect(feedRow(page, "sandbox.paused", sandboxId)).toBeVisible();
  await page.getByLabel("Event type").selectOption("");

  // Paused: a new event is counted, not shown, until Resume.
  await page.getByRole("button", { name: "Pause" }).click();
  await expect(page.getByRole("button", { name: "Resume" })).toHaveAttribute("aria-pressed", "true");
  const resumed = await servers.engine.api("POST", `/sandboxes/${sandboxId}/resume`);
  expect(resumed.status).toBe(200);
  await expect(page.getByRole("status").filter({ hasText: "Paused: 1 new" })).toBeVisible();
  await expect(feedRow(page, "sandbox.resumed", sandboxId)).toHaveCount(0);
  await page.getByRole("button", { name: "Resume" }).click();
  await expect(feedRow(page, "sandbox.resumed", sandboxId)).toBeVisible();

  await checkA11yLightAndDark(page, "events-feed");
  expect(problems).toEqual([]);
});

test("a forged delivery is refused with 401 and the feed never shows it", async ({ connected: page, playwright }) => {
  const { receiver } = (await (await page.request.get("/api/hooks/receivers")).json()) as {
    receiver: { url: string };
  };
  const forgedId = "evt_FORGEDBYTHETEST0000000001";
  const body = JSON.stringify({
    id: forgedId,
    type: "sandbox.terminated",
    created_at: new Date().toISOString(),
    data: { sandbox: { id: sandboxId, status: "terminated" } },
  });
  // As curl would send it, server to server: no cookie, no Origin, a signature made without the secret.
  const outsider = await playwright.request.newContext();
  const forged = await outsider.fetch(receiver.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-orkestr-event": "sandbox.terminated",
      "x-orkestr-delivery": "dlv_FORGED",
      "x-orkestr-signature": `sha256=${"0".repeat(64)}`,
    },
    data: body,
  });
  expect(forged.status()).toBe(401);
  expect(await forged.json()).toMatchObject({ code: "bad_signature", detail: expect.any(String) });

  const unknown = await outsider.fetch(receiver.url.replace(/rcv_[A-Za-z0-9_-]+$/, "rcv_unknown"), {
    method: "POST",
    headers: { "content-type": "application/json", "x-orkestr-signature": `sha256=${"0".repeat(64)}` },
    data: body,
  });
  expect(unknown.status()).toBe(401);
  expect(await unknown.json()).toMatchObject({ code: "unknown_receiver" });
  await outsider.dispose();

  await page.goto("/events");
  await expect(feedRow(page, "sandbox.created", sandboxId)).toBeVisible();
  await expect(feed(page).locator(`tr[data-event-id="${forgedId}"]`)).toHaveCount(0);
  const listed = await (await page.request.get("/api/hooks/events?limit=100")).text();
  expect(listed).not.toContain(forgedId);
});

test("a redelivery from the webhook's log is answered 200 duplicate: the engine records a success, the feed shows the event once", async ({
  connected: page,
  baseURL,
}) => {
  const { receiver } = (await (await page.request.get("/api/hooks/receivers")).json()) as {
    receiver: { webhook_id: string };
  };
  const deliveries = `/api/v1/webhooks/${receiver.webhook_id}/deliveries`;
  const done = (await (await page.request.get(`${deliveries}?status=succeeded&limit=1`)).json()) as DeliveryRecord[];
  expect(done.length).toBe(1);
  const original = done[0]!;
  const again = await page.request.post(`${deliveries}/${original.id}/redeliver`, { headers: { origin: baseURL! } });
  expect(again.status(), await again.text()).toBe(202);
  const { delivery_id } = (await again.json()) as { delivery_id: string };
  let record: DeliveryRecord | null = null;
  await expect
    .poll(
      async () => {
        record = (await (await page.request.get(`${deliveries}/${delivery_id}`)).json()) as DeliveryRecord;
        return record.attempts;
      },
      { timeout: 20_000 },
    )
    .toBeGreaterThan(0);
  expect(record).toMatchObject({ event_id: original.event_id, status: "succeeded", response_status: 200 });
  expect(record!.response_body_excerpt).toContain('"status":"duplicate"');
  const listed = (await (await page.request.get("/api/hooks/events?limit=100")).json()) as {
    items: { event_id: string }[];
  };
  expect(listed.items.filter((e) => e.event_id === original.event_id)).toHaveLength(1);
});

test("a teammate sees the owner's receiver webhook marked as a teammate's, is offered no rotate, edit or delete, and the server refuses them anyway", async ({
  connected: page,
  servers,
  browser,
  baseURL,
}) => {
  const { receiver } = (await (await page.request.get("/api/hooks/receivers")).json()) as {
    receiver: { url: string; webhook_id: string };
  };
  const context = await teammate(servers, browser, baseURL!);
  const mate = await context.newPage();
  const problems = watchForErrors(mate);

  // The list marks it in its row: Baton's receiver, a teammate's.
  await mate.goto("/webhooks");
  const row = mate.getByTestId("webhook-row").filter({ hasText: receiver.webhook_id });
  const mark = row.getByTestId("batons-receiver-mark");
  await expect(mark).toContainText("Baton's receiver");
  await expect(mark).toContainText("A teammate's");
  await checkA11yLightAndDark(mate, "receiver-teammate-list");

  // Its page says whose it is and how it is stopped, and offers only what breaks nothing.
  await mate.goto(`/webhooks/${receiver.webhook_id}`);
  const notice = mate.getByTestId("batons-receiver");
  await expect(notice).toContainText("Baton's receiver of a teammate");
  await expect(notice).toContainText("only they can stop it, from Events → Stop receiving");
  const actions = mate.getByTestId("webhook-actions");
  await expect(actions.getByRole("button", { name: "Send test" })).toBeEnabled();
  await expect(actions.getByRole("button", { name: "Disable" })).toBeEnabled();
  for (const name of [/Rotate/, /Edit/, /Delete/])
    await expect(actions.getByRole("button", { name }), String(name)).toHaveCount(0);
  // Nor as code: the snippets offered are the ones the API accepts for it.
  const codeActions = mate.getByTestId("action-code-select").locator("option");
  await expect(codeActions).toContainText(["Disable", "Send a test"]);
  await expect(codeActions.filter({ hasText: /Rotate|Delete/ })).toHaveCount(0);
  await checkA11yLightAndDark(mate, "receiver-teammate-webhook");

  // What the page does not offer, the server refuses (tests/console/receive-in-baton.test.ts has every case).
  const headers = { origin: baseURL! };
  for (const refused of [
    await context.request.post(`/api/v1/webhooks/${receiver.webhook_id}/rotate-secret`, { headers }),
    await context.request.patch(`/api/v1/webhooks/${receiver.webhook_id}`, {
      headers,
      data: { url: "https://example.com/hook" },
    }),
    await context.request.delete(`/api/v1/webhooks/${receiver.webhook_id}`, { headers }),
  ]) {
    expect(refused.status(), await refused.text()).toBe(409);
    expect(await refused.json()).toMatchObject({ code: "webhook_owned_by_baton" });
  }

  // Still there, unchanged, and still delivering to Baton.
  const upstream = await page.request.get(`/api/v1/webhooks/${receiver.webhook_id}`);
  expect(upstream.status()).toBe(200);
  expect(((await upstream.json()) as { url: string }).url).toBe(receiver.url);
  expect(problems).toEqual([]);
  await context.close();
});

test("the sandbox page shows a status change from the received event, its own stream and reads held back", async ({
  connected: page,
  servers,
}) => {
  const problems = watchForErrors(page);
  // The page's own live stream and its polls of the sandbox are held from the start: its status can
  // change only through the received event.
  const release = await holdRequests(page, new RegExp(`/api/v1/sandboxes/${sandboxId}(/live)?(\\?.*)?$`));
  try {
    await gotoListening(page, `/sandboxes/${sandboxId}`);
    const status = page.getByTestId("sandbox-status");
    await expect(status).toHaveText("running");
    const paused = await servers.engine.api("POST", `/sandboxes/${sandboxId}/pause`);
    expect(paused.status).toBe(200);
    await expect(status).toHaveText("paused");
  } finally {
    await release();
  }
  expect(problems).toEqual([]);
});

// The two below need no receiver (unknown ids), so each runs alone with -g too.
test("an unknown receiver is answered before its body arrives: nothing reads a stranger's body first", async ({
  baseURL,
}) => {
  const target = new URL("/api/hooks/rcv_nosuchreceiver", baseURL);
  // 250 KiB declared, 1 KiB sent, the rest never: only a server that does not wait for the body answers.
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": String(250 * 1024),
        "x-orkestr-signature": `sha256=${"0".repeat(64)}`,
      },
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error("no answer within 5 s: the server waited for the body"));
    }, 5_000);
    req.on("response", (res) => {
      clearTimeout(timer);
      res.resume();
      req.destroy();
      resolve(res.statusCode ?? 0);
    });
    // (After the answer, the socket torn down mid-body is expected; a settled promise ignores it.)
    req.on("error", reject);
    req.write(Buffer.alloc(1024, 0x78));
  });
  expect(status).toBe(401);
});

test("a flood of unsigned 250 KiB posts from one address gets 429 with Retry-After (last: it spends this address's budget)", async ({
  baseURL,
  playwright,
}) => {
  // The review's flood (300 in 2 s), scaled down. The budget is a fixed window, so a flood that
  // straddles its end may be allowed up to two windows' worth (120): past that, 429 for certain.
  const outsider = await playwright.request.newContext();
  const body = Buffer.alloc(250 * 1024, 0x78);
  const answers = await Promise.all(
    Array.from({ length: 140 }, (_, i) =>
      outsider.fetch(new URL(`/api/hooks/rcv_flood${i}`, baseURL).href, {
        method: "POST",
        headers: { "content-type": "application/json", "x-orkestr-signature": `sha256=${"0".repeat(64)}` },
        data: body,
      }),
    ),
  );
  const statuses = answers.map((a) => a.status());
  expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(20);
  const limited = answers.find((a) => a.status() === 429)!;
  expect(Number(limited.headers()["retry-after"])).toBeGreaterThan(0);
  expect(await limited.json()).toMatchObject({ code: "rate_limited", detail: expect.stringContaining("Try again") });
  await outsider.dispose();
});
