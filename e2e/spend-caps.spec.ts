import type { APIRequestContext, Browser, Page } from "@playwright/test";
import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { formatMicro as eur } from "../lib/format";
import type { CapsView } from "../lib/usage/caps-view";
import { startSmtpServer, type TestSmtpServer } from "../tests/helpers/smtp-server";
import { seriousAxeViolations } from "./a11y";
import { expect, OWNER, test as base } from "./fixtures";
import { addMember, screenshot, signedInContext, watchForErrors } from "./helpers";

// Spend caps acting end to end against the real engine (issue 22), seen from the owner's and a
// member's browsers: real work (`yes > /dev/null` in a sandbox) crosses a tiny cap; Baton's usage
// job (every 2 s here) books it, alerts by email (a real SMTP server this spec starts) and by a
// signed webhook (a loopback receiver this spec starts, allowed by BATON_ALERT_WEBHOOK_ALLOW), and
// acts: a "pause" cap pauses the running sandbox with auto_resume cleared and refuses creates and
// resumes with a 402 that names the cap, the amount and who can raise it; a member's "block" cap
// stops that member only. Caps are set through the API (the /usage UI for them is another spec's).
//
// The team's rate card is raised to EUR 3.60 per vCPU-hour (1,000 µ€ per CPU-second) so that a
// cap of one cent is ten CPU-seconds of work: real spending, in seconds instead of hours.

const INTERVAL_MS = 2000;
const MICRO_PER_CPU_SECOND = 1000;
const MEMBER = { email: "grace@example.com", password: "a long and correct horse battery" };

interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

/** A webhook receiver on loopback: answers 204 and keeps every request as it arrived. */
async function startReceiver(): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/baton-alerts`;
  return { url, deliveries, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** What a receiver does with `X-Orkestr-Signature: sha256=<hex>`: recompute over the raw body, compare in constant time. */
function signatureValid(secret: string, delivery: Delivery): boolean {
  const given = String(delivery.headers["x-orkestr-signature"] ?? "");
  const expected = `sha256=${createHmac("sha256", secret).update(delivery.body, "utf8").digest("hex")}`;
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

interface Member {
  email: string;
  password: string;
  userId: string;
}

const test = base.extend<object, { smtp: TestSmtpServer; receiver: Receiver; member: Member }>({
  // A member of the owner's team, connected to its engine account (e2e/seed/add-member.ts).
  member: [
    async ({ servers, owner }, use) => {
      void owner; // the owner's team, which the member joins, is set up first
      const { userId } = addMember(servers, MEMBER, "member");
      await use({ ...MEMBER, userId });
    },
    { scope: "worker" },
  ],
  smtp: [
    // eslint-disable-next-line no-empty-pattern -- Playwright reads a fixture's dependencies from this pattern
    async ({}, use) => {
      const smtp = await startSmtpServer();
      await use(smtp);
      await smtp.close();
    },
    { scope: "worker" },
  ],
  receiver: [
    // eslint-disable-next-line no-empty-pattern -- as above
    async ({}, use) => {
      const receiver = await startReceiver();
      await use(receiver);
      await receiver.close();
    },
    { scope: "worker" },
  ],
  consoleEnv: [
    async ({ smtp, receiver }, use) => {
      await use({
        BATON_USAGE_INTERVAL_MS: String(INTERVAL_MS),
        BATON_SMTP_URL: smtp.url,
        BATON_MAIL_FROM: "Baton <baton@example.test>",
        BATON_ALERT_WEBHOOK_ALLOW: new URL(receiver.url).origin,
      });
    },
    { scope: "worker" },
  ],
});
test.use({ consoleInstance: "spend-caps" });
test.describe.configure({ mode: "serial" });

const origin = (baseURL: string) => ({ origin: baseURL });

/** The member's browser context, signed in. */
async function memberContext(browser: Browser, baseURL: string, member: Member) {
  return { context: await signedInContext(browser, baseURL, member), userId: member.userId };
}

async function capsOf(api: APIRequestContext): Promise<CapsView> {
  const res = await api.get("/api/usage/caps");
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()) as CapsView;
}

async function putCap(
  api: APIRequestContext,
  baseURL: string,
  cap: { user_id?: string | null; window: "day" | "month"; limit_micro: number; action: "alert" | "block" | "pause" },
): Promise<CapsView> {
  const res = await api.put("/api/usage/caps", { data: cap, headers: origin(baseURL) });
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()) as CapsView;
}

/** The cap's state once the job has evaluated it after `since` (epoch ms). */
async function evaluatedAfter(api: APIRequestContext, capId: string, since: number) {
  let found: CapsView["caps"][number] | undefined;
  await expect
    .poll(
      async () => {
        found = (await capsOf(api)).caps.find((c) => c.id === capId);
        return found?.evaluated_at ? Date.parse(found.evaluated_at) > since : false;
      },
      { timeout: 5 * INTERVAL_MS + 5_000, message: `the caps job evaluates cap ${capId}` },
    )
    .toBe(true);
  return found!;
}

async function exec(api: APIRequestContext, baseURL: string, id: string, command: string, timeoutSeconds = 30) {
  return api.post(`/api/v1/sandboxes/${id}/exec`, {
    data: { command, timeout_seconds: timeoutSeconds },
    headers: origin(baseURL),
  });
}

async function checkA11yLightAndDark(page: Page, name: string) {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expect(page.locator("html")).toHaveClass(scheme === "dark" ? /(^|\s)dark(\s|$)/ : /^(?!.*\bdark\b)/);
    expect(await seriousAxeViolations(page), `axe on ${name} (${scheme})`).toEqual([]);
    await screenshot(page, `${name}-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: "light" });
}

interface AuditItem {
  action: string;
  created_at: string;
  result: string;
  data: Record<string, unknown>;
}

async function auditOf(api: APIRequestContext, action: string): Promise<AuditItem[]> {
  const res = await api.get(`/api/audit?action=${encodeURIComponent(action)}&limit=100`);
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { items: AuditItem[] }).items.filter((e) => e.action === action);
}

test("a tiny team cap (pause), crossed by real work: alerts by mail and signed webhook, the sandbox paused, creates and resumes refused until the cap is raised @db", async ({
  connected: page,
  servers,
  smtp,
  receiver,
  browser,
  baseURL,
  member: seeded,
}) => {
  test.setTimeout(150_000);
  const refusedIsExpected = (status: number, url: string) =>
    status === 402 && /\/api\/v1\/sandboxes(\/[^/]+\/resume)?$/.test(new URL(url).pathname);
  const problems = watchForErrors(page, { allowStatus: refusedIsExpected });
  const api = page.request;
  const member = await memberContext(browser, baseURL!, seeded);
  const mp = await member.context.newPage();
  const memberProblems = watchForErrors(mp, { allowStatus: refusedIsExpected });
  const made: string[] = [];
  let capId: string | null = null;
  try {
    // The owner's setup, through the API: the rate card, the alert webhook (its secret is answered once).
    const rates = await api.patch("/api/usage/rates", {
      data: { vcpu_hour_micro: MICRO_PER_CPU_SECOND * 3600 },
      headers: origin(baseURL!),
    });
    expect(rates.status(), await rates.text()).toBe(200);
    const alerts = await api.patch("/api/usage/alerts", {
      data: { webhook_url: receiver.url, email: true },
      headers: origin(baseURL!),
    });
    expect(alerts.status(), await alerts.text()).toBe(200);
    const alertSettings = (await alerts.json()) as { webhook_secret: string; email_configured: boolean };
    expect(alertSettings.email_configured).toBe(true);
    const secret = alertSettings.webhook_secret;
    expect(secret).toMatch(/^whsec_/);

    // A sandbox that would wake on traffic (auto_resume), made through Baton.
    const created = await api.post("/api/v1/sandboxes", {
      data: { template: "python-3.12", auto_resume: true, timeout_seconds: 600 },
      headers: origin(baseURL!),
    });
    expect(created.status(), await created.text()).toBe(201);
    const id = ((await created.json()) as { id: string; auto_resume?: boolean }).id;
    made.push(id);
    expect(((await (await api.get(`/api/v1/sandboxes/${id}`)).json()) as { auto_resume: boolean }).auto_resume).toBe(
      true,
    );

    // The team's daily cap: one cent, pause.
    const limitMicro = 10_000;
    const set = await putCap(api, baseURL!, { user_id: null, window: "day", limit_micro: limitMicro, action: "pause" });
    capId = set.caps.find((c) => c.user_id === null && c.window === "day")!.id;

    // Work in steps of at most two CPU-seconds (≤ 20 % of the cap each) until the job's figure is past 50 %.
    let cap = await evaluatedAfter(api, capId, Date.now());
    for (let step = 0; (cap.percent ?? 0) < 50; step++) {
      expect(step, "a few seconds of work reach half the cap").toBeLessThan(15);
      const ran = await exec(api, baseURL!, id, "timeout 2 sh -c 'yes > /dev/null'; true");
      expect(ran.status(), await ran.text()).toBe(200);
      cap = await evaluatedAfter(api, capId, Date.now() + 100);
    }
    expect(cap.reached).toBe(false);
    expect(cap.percent).toBeLessThan(100);

    // Past 50 %: the header meter, in the owner's and the member's browsers, light and dark.
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto("/sandboxes");
    const meter = page.getByTestId("spend-meter");
    await expect(meter).toBeVisible();
    // Between half and the whole of one cent: the sub-cent figure as it is (€0.0062), not €0.01 of €0.01.
    await expect(meter).toHaveAccessibleName(/^\d+ % of the team's daily spend cap \(€0\.00[1-9]\d{0,3} of €0\.01\)$/);
    await expect(page.getByTestId("spend-cap-banner")).toHaveCount(0);
    // And the amber warning under the header, at every width (the meter hides below `sm`).
    const warning = page.getByTestId("spend-alert-banner");
    await expect(warning).toContainText(
      /^Team spend is at [5-9]\d\s% of its €0\.01 daily cap \(€0\.00[1-9]\d{0,3} spent today, UTC\)\./,
    );
    await expect(warning).toContainText("At 100 %, Baton pauses the team's running sandboxes and refuses new ones.");
    await checkA11yLightAndDark(page, "spend-meter-owner");
    await mp.setViewportSize({ width: 1280, height: 800 });
    await mp.goto("/sandboxes");
    await expect(mp.getByTestId("spend-meter")).toBeVisible();
    await expect(mp.getByTestId("spend-alert-banner")).toContainText(
      /^Team spend is at [5-9]\d\s% of its €0\.01 daily cap/,
    );
    await checkA11yLightAndDark(mp, "spend-meter-member");

    // The 50 % alert went out: by mail to the owner, and to the webhook, signed.
    const mailAt = async (threshold: number) => {
      await expect
        .poll(() => smtp.messages.filter((m) => m.subject.includes(`${threshold} %`)).length, {
          timeout: 10_000,
          message: `the ${threshold} % mail arrives`,
        })
        .toBeGreaterThan(0);
      const mails = smtp.messages.filter((m) => m.subject.includes(`${threshold} %`));
      // Owners and admins only: the member gets none.
      expect(mails.map((m) => m.to).flat()).toEqual([OWNER.email]);
      return mails[0]!;
    };
    const hookAt = async (threshold: number) => {
      const of = () =>
        receiver.deliveries.filter(
          (d) => (JSON.parse(d.body) as { data: { threshold: number } }).data.threshold === threshold,
        );
      await expect.poll(() => of().length, { timeout: 10_000, message: `the ${threshold} % webhook arrives` }).toBe(1);
      return of()[0]!;
    };
    const half = await mailAt(50);
    expect(half.subject).toBe(`[Baton] ${OWNER.teamName}: 50 % of a spend cap`);
    expect(half.text).toContain(`${OWNER.teamName}: 50 % of the team's daily spend cap reached`);
    expect(half.text).toMatch(/\(€0\.00[1-9]\d{0,3} of €0\.01, UTC \d{4}-\d{2}-\d{2}\)/);
    const halfHook = await hookAt(50);
    expect(signatureValid(secret, halfHook), "the webhook's signature checks out").toBe(true);
    expect(signatureValid("whsec_not_the_secret", halfHook)).toBe(false);
    expect(halfHook.headers["x-orkestr-event"]).toBe("spend_cap.alert");
    expect(JSON.parse(halfHook.body)).toMatchObject({
      type: "spend_cap.alert",
      data: {
        team: { name: OWNER.teamName },
        cap: { id: capId, subject: "team", window: "day", limit_micro: limitMicro, action: "pause" },
        threshold: 50,
      },
    });

    // Now `yes` until the cap stops it: the job pauses the sandbox at its first reading past the cap.
    const crossing = Date.now();
    const spinning = exec(api, baseURL!, id, "timeout 60 sh -c 'yes > /dev/null'; true", 90).catch(() => null);
    await expect
      .poll(
        async () => ((await (await api.get(`/api/v1/sandboxes/${id}`)).json()) as { status: string }).status,
        // What is left of the cap (≤ 5 CPU-seconds) plus one interval, and a margin for this busy machine.
        { timeout: 5_000 + INTERVAL_MS + 10_000, intervals: [250] },
      )
      .toBe("paused");
    const pausedAfterMs = Date.now() - crossing;
    console.log(`[spend-caps] paused ${pausedAfterMs} ms after the final busy loop started`);
    void spinning;

    // The audit: reached and paused in the same run (the first reading past the cap), auto_resume first cleared.
    const [reached] = await auditOf(api, "spend_cap.reached");
    const [paused] = await auditOf(api, "spend_cap.pause");
    expect(reached).toBeTruthy();
    expect(paused).toMatchObject({ data: { paused: [id], window: "day", limit_micro: limitMicro } });
    expect(paused!.created_at).toBe(reached!.created_at);
    const spentAtPause = paused!.data.spent_micro as number;
    // Overspend is bounded by one interval's run-rate (one CPU at 1,000 µ€/s), with a reading's slack.
    expect(spentAtPause).toBeGreaterThanOrEqual(limitMicro);
    expect(spentAtPause).toBeLessThan(limitMicro + (2 * INTERVAL_MS * MICRO_PER_CPU_SECOND) / 1000 + 1000);

    // The owner's sandbox page: paused, auto-resume off.
    await page.goto(`/sandboxes/${id}`);
    await expect(page.getByTestId("sandbox-status").filter({ visible: true })).toHaveText("paused");
    await expect(page.getByText("Auto-resume", { exact: true }).locator("..")).toContainText("off");
    expect(((await (await api.get(`/api/v1/sandboxes/${id}`)).json()) as { auto_resume: boolean }).auto_resume).toBe(
      false,
    );
    await expect(page.getByTestId("spend-cap-banner")).toBeVisible();
    await checkA11yLightAndDark(page, "spend-cap-paused-sandbox");

    // The 100 % alert: mail and signed webhook, naming team, cap and threshold.
    const full = await mailAt(100);
    expect(full.subject).toBe(`[Baton] ${OWNER.teamName}: 100 % of a spend cap`);
    expect(full.text).toContain(`${OWNER.teamName}: 100 % of the team's daily spend cap reached`);
    expect(full.text).toContain("Baton pauses its running sandboxes and refuses new ones until the cap is raised.");
    const fullHook = await hookAt(100);
    expect(signatureValid(secret, fullHook)).toBe(true);
    expect(JSON.parse(fullHook.body)).toMatchObject({ data: { threshold: 100, cap: { id: capId } } });
    // 80 % was crossed on the way (in the same reading or before): it went out once too.
    await hookAt(80);

    // The member's browser: the banner, then the create form refused with the cap's sentence.
    await mp.goto("/sandboxes");
    const banner = mp.getByTestId("spend-cap-banner");
    await expect(banner).toContainText("The team's daily spend cap is reached");
    await expect(banner).toContainText("Baton paused the running sandboxes it covers");
    // Reached: the red banner only, not the warning as well.
    await expect(mp.getByTestId("spend-alert-banner")).toHaveCount(0);
    await checkA11yLightAndDark(mp, "spend-cap-banner-member");

    await mp.goto("/sandboxes/new");
    await expect(mp.getByRole("button", { name: "Create sandbox" })).toBeVisible();
    await mp.getByRole("button", { name: "Create sandbox" }).click();
    const refusal = mp.getByTestId("create-error");
    await expect(refusal).toContainText(`${OWNER.teamName}'s daily spend cap of €0.01 is reached`);
    await expect(refusal).toContainText("so Baton does not create a sandbox");
    await expect(refusal).toContainText("The team's owners can raise the cap on the Usage page.");
    await expect(refusal).toContainText("spend_cap_reached");
    await checkA11yLightAndDark(mp, "spend-cap-create-refused");

    // Resuming is refused likewise (the page says why; the sandbox stays paused).
    await mp.goto(`/sandboxes/${id}`);
    await mp.getByRole("button", { name: "Resume" }).click();
    await expect(
      mp.getByText(/daily spend cap of €0\.01 is reached .* so Baton does not resume this sandbox/),
    ).toBeVisible();
    await expect(mp.getByTestId("sandbox-status").filter({ visible: true })).toHaveText("paused");
    expect(((await (await api.get(`/api/v1/sandboxes/${id}`)).json()) as { status: string }).status).toBe("paused");

    // The owner raises the cap (API): the member's create goes through at once.
    await putCap(api, baseURL!, { user_id: null, window: "day", limit_micro: 1_000_000, action: "pause" });
    await mp.goto("/sandboxes/new");
    await mp.getByRole("button", { name: "Create sandbox" }).click();
    await expect(mp).toHaveURL(/\/sandboxes\/sbx_[A-Za-z0-9]+(\?team=[a-z0-9-]+)?$/, { timeout: 20_000 });
    made.push(/\/sandboxes\/(sbx_[A-Za-z0-9]+)/.exec(mp.url())![1]!);
    await expect(mp.getByTestId("spend-cap-banner")).toHaveCount(0);

    expect(problems).toEqual([]);
    expect(memberProblems).toEqual([]);
  } finally {
    for (const id of made) await servers.engine.api("DELETE", `/sandboxes/${id}`).catch(() => null);
    if (capId) await api.delete(`/api/usage/caps/${capId}`, { headers: origin(baseURL!) });
    await member.context.close();
  }
});

test("a member's cap (block) stops that member only: their create is refused, the owner's goes through @db", async ({
  connected: page,
  servers,
  browser,
  baseURL,
  member: seeded,
}) => {
  test.setTimeout(90_000);
  const problems = watchForErrors(page);
  const api = page.request;
  const member = await memberContext(browser, baseURL!, seeded);
  const mp = await member.context.newPage();
  const memberProblems = watchForErrors(mp, {
    allowStatus: (status, url) => status === 402 && new URL(url).pathname === "/api/v1/sandboxes",
  });
  const made: string[] = [];
  let capId: string | null = null;
  try {
    const rates = await api.patch("/api/usage/rates", {
      data: { vcpu_hour_micro: MICRO_PER_CPU_SECOND * 3600 },
      headers: origin(baseURL!),
    });
    expect(rates.status()).toBe(200);
    // The member's own sandbox, busy for more than their cap's worth (one cent: ten CPU-seconds).
    const created = await member.context.request.post("/api/v1/sandboxes", {
      data: { template: "python-3.12", timeout_seconds: 600 },
      headers: origin(baseURL!),
    });
    expect(created.status(), await created.text()).toBe(201);
    const id = ((await created.json()) as { id: string }).id;
    made.push(id);
    const set = await putCap(api, baseURL!, {
      user_id: member.userId,
      window: "day",
      limit_micro: 10_000,
      action: "block",
    });
    capId = set.caps.find((c) => c.user_id === member.userId)!.id;
    const ran = await exec(member.context.request, baseURL!, id, "timeout 14 sh -c 'yes > /dev/null'; true");
    expect(ran.status(), await ran.text()).toBe(200);
    await expect
      .poll(async () => (await capsOf(api)).caps.find((c) => c.id === capId)?.reached, {
        timeout: 4 * INTERVAL_MS + 5_000,
      })
      .toBe(true);

    // The member: banner, and the form's create refused with "Your" cap; their running sandbox is not paused (block).
    await mp.goto("/sandboxes/new");
    await expect(mp.getByTestId("spend-cap-banner")).toContainText("Your daily spend cap is reached");
    await mp.getByRole("button", { name: "Create sandbox" }).click();
    const refusal = mp.getByTestId("create-error");
    await expect(refusal).toContainText("Your daily spend cap of €0.01 is reached");
    await expect(refusal).toContainText("Running sandboxes keep running.");
    await expect(refusal).toContainText("can raise the cap on the Usage page.");
    await checkA11yLightAndDark(mp, "spend-cap-member-block");
    expect(((await (await api.get(`/api/v1/sandboxes/${id}`)).json()) as { status: string }).status).toBe("running");

    // The owner: no banner (their caps are not reached), and the same form creates.
    await page.goto("/sandboxes/new");
    await expect(page.getByTestId("spend-cap-banner")).toHaveCount(0);
    await page.getByRole("button", { name: "Create sandbox" }).click();
    await expect(page).toHaveURL(/\/sandboxes\/sbx_[A-Za-z0-9]+(\?team=[a-z0-9-]+)?$/, { timeout: 20_000 });
    made.push(/\/sandboxes\/(sbx_[A-Za-z0-9]+)/.exec(page.url())![1]!);

    // The audit: reached once for the member's cap, no pause (block never pauses).
    const reached = (await auditOf(api, "spend_cap.reached")).filter((e) => e.data.subject === member.userId);
    expect(reached).toHaveLength(1);
    expect((await auditOf(api, "spend_cap.pause")).filter((e) => e.data.subject === member.userId)).toEqual([]);

    expect(problems).toEqual([]);
    expect(memberProblems).toEqual([]);
  } finally {
    for (const id of made) await servers.engine.api("DELETE", `/sandboxes/${id}`).catch(() => null);
    if (capId) await api.delete(`/api/usage/caps/${capId}`, { headers: origin(baseURL!) });
    await member.context.close();
  }
});

test("the amber warning past each alert threshold, at every width: dismissed for the tab, back at the next threshold; red at 100 % @db", async ({
  connected: page,
  baseURL,
}) => {
  test.setTimeout(150_000);
  const problems = watchForErrors(page);
  const api = page.request;
  const made: string[] = [];
  let capId: string | null = null;
  // The team's URL, as a pasted link has it: the banner's link keeps it.
  const SLUG = "analytical-engines";
  const sandboxes = `/sandboxes?team=${SLUG}`;
  try {
    // Ten times the first test's price (10,000 µ€ per CPU-second): a few seconds of work are cents,
    // so whole-cent caps can put the figure at a chosen percentage.
    const rates = await api.patch("/api/usage/rates", {
      data: { vcpu_hour_micro: 10 * MICRO_PER_CPU_SECOND * 3600 },
      headers: origin(baseURL!),
    });
    expect(rates.status(), await rates.text()).toBe(200);
    // The team's monthly cap, high for now: the job's figure of the month so far.
    const set = await putCap(api, baseURL!, {
      user_id: null,
      window: "month",
      limit_micro: 100_000_000,
      action: "block",
    });
    capId = set.caps.find((c) => c.user_id === null && c.window === "month")!.id;
    const created = await api.post("/api/v1/sandboxes", {
      data: { template: "python-3.12", timeout_seconds: 600 },
      headers: origin(baseURL!),
    });
    expect(created.status(), await created.text()).toBe(201);
    const id = ((await created.json()) as { id: string }).id;
    made.push(id);
    let cap = await evaluatedAfter(api, capId, Date.now());
    for (let step = 0; (cap.spent_micro ?? 0) < 60_000; step++) {
      expect(step, "a few seconds of work spend six cents").toBeLessThan(10);
      const ran = await exec(api, baseURL!, id, "timeout 3 sh -c 'yes > /dev/null'; true");
      expect(ran.status(), await ran.text()).toBe(200);
      cap = await evaluatedAfter(api, capId, Date.now() + 100);
    }
    // Gone (its final reading booked): the month's figure stands still from here.
    const gone = await api.delete(`/api/v1/sandboxes/${id}`, { headers: origin(baseURL!) });
    expect(gone.status(), await gone.text()).toBeLessThan(300);
    made.pop();
    let spent = -1;
    for (let step = 0; cap.spent_micro !== spent; step++) {
      expect(step, "the month's figure settles").toBeLessThan(10);
      spent = cap.spent_micro!;
      cap = await evaluatedAfter(api, capId, Date.now() + 100);
    }

    /** The team's monthly cap at `limit` (whole cents), once the job has applied it. */
    const capAt = async (limit: number) => {
      await putCap(api, baseURL!, { user_id: null, window: "month", limit_micro: limit, action: "block" });
      const now = await evaluatedAfter(api, capId!, Date.now() + 100);
      expect(now.limit_micro).toBe(limit);
      return { limit, percent: now.percent! };
    };
    const cents = (micro: number) => Math.ceil(micro / 10_000) * 10_000;
    const warning = page.getByTestId("spend-alert-banner");
    const expectWarning = async (limit: number, percent: number) => {
      // The list has loaded (the screenshots show the page, not its skeleton).
      await expect(page.getByText(/^No sandboxes yet$|, all loaded$/).first()).toBeVisible();
      await expect(warning).toBeVisible();
      await expect(warning).toHaveRole("status");
      await expect(warning).toContainText(
        `Team spend is at ${Math.floor(percent)} % of its ${eur(limit)} monthly cap (${eur(spent)} spent this month, UTC). ` +
          "New sandboxes will be refused at 100 %.",
      );
      await expect(warning.getByRole("link", { name: "See usage and caps" })).toHaveAttribute(
        "href",
        `/usage?team=${SLUG}#spend-caps`,
      );
    };

    // Past 50 %: the warning at 390 px, where the header's meter is hidden, and at 1280 px.
    // At most 60 % of a whole-cent limit, and over 54 % with six cents or more spent.
    const half = await capAt(cents(spent / 0.6));
    expect(half.percent).toBeGreaterThanOrEqual(50);
    expect(half.percent).toBeLessThan(80);
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(sandboxes);
    await expectWarning(half.limit, half.percent);
    await expect(page.getByTestId("spend-meter")).toBeHidden();
    await checkA11yLightAndDark(page, "spend-alert-50-390");
    await page.setViewportSize({ width: 1280, height: 800 });
    await expect(page.getByTestId("spend-meter")).toBeVisible();
    await checkA11yLightAndDark(page, "spend-alert-50-1280");

    // Dismissed: gone, focus where reading goes on, and still gone after a reload and on another page.
    await warning.getByRole("button", { name: "Dismiss" }).click();
    await expect(warning).toHaveCount(0);
    await expect(page.locator("#main")).toBeFocused();
    await page.reload();
    await expect(page.getByRole("heading", { level: 1, name: "Sandboxes" })).toBeVisible();
    await expect(warning).toHaveCount(0);
    await page.goto(`/usage?team=${SLUG}`);
    await expect(page.getByTestId("spend-caps")).toBeVisible();
    await expect(warning).toHaveCount(0);
    // For this tab only: another tab of the same browser shows it.
    const other = await page.context().newPage();
    await other.goto(sandboxes);
    await expect(other.getByTestId("spend-alert-banner")).toBeVisible();
    await other.close();

    // Past 80 %: a new threshold, so the warning is back in the tab that dismissed the first one.
    // 95 % rounded up to a whole cent: over 82 % with six cents or more spent, and far enough under
    // 100 % that spent and cap do not read as the same amount.
    const most = await capAt(cents(spent / 0.95));
    expect(most.percent).toBeGreaterThanOrEqual(80);
    expect(most.percent).toBeLessThan(100);
    await page.goto(sandboxes);
    await expectWarning(most.limit, most.percent);
    await page.setViewportSize({ width: 390, height: 800 });
    await checkA11yLightAndDark(page, "spend-alert-80-390");
    await page.setViewportSize({ width: 1280, height: 800 });
    await checkA11yLightAndDark(page, "spend-alert-80-1280");

    // At 100 % (a cap set below what is spent acts at once): the red banner, not the warning.
    const limit = Math.floor(spent / 10_000) * 10_000;
    await putCap(api, baseURL!, { user_id: null, window: "month", limit_micro: limit, action: "block" });
    expect((await evaluatedAfter(api, capId, Date.now() + 100)).reached).toBe(true);
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(sandboxes);
      await expect(page.getByTestId("spend-cap-banner")).toContainText("The team's monthly spend cap is reached");
      await expect(warning).toHaveCount(0);
      await checkA11yLightAndDark(page, `spend-cap-reached-${width}`);
    }
    expect(problems).toEqual([]);
  } finally {
    for (const id of made) await api.delete(`/api/v1/sandboxes/${id}`, { headers: origin(baseURL!) }).catch(() => null);
    if (capId) await api.delete(`/api/usage/caps/${capId}`, { headers: origin(baseURL!) });
  }
});
