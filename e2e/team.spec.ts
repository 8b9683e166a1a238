import fs from "node:fs";
import { seriousAxeViolations } from "./a11y";
import { expect, OWNER, test as base, type Servers } from "./fixtures";
import { runSeed, screenshot, watchForErrors } from "./helpers";
import { invitationLinkIn, startSmtpServer, type TestSmtpServer } from "../tests/helpers/smtp-server";

// @db: members, invitations and roles are rows of the console database.
// The team admin's story through the pages, against a real engine and a real SMTP server that this
// spec starts: the owner invites a member (the mail is read from the test's server), the member
// accepts in a second browser context by creating an account, the owner makes them a viewer (no
// Terminate button, and the API answers 403), then removes them (their engine token gets 401 at once).

const test = base.extend<object, { smtp: TestSmtpServer }>({
  smtp: [
    // eslint-disable-next-line no-empty-pattern -- Playwright reads a fixture's dependencies from this pattern
    async ({}, use) => {
      const smtp = await startSmtpServer();
      await use(smtp);
      await smtp.close();
    },
    { scope: "worker" },
  ],
  consoleEnv: [
    async ({ smtp }, use) => {
      await use({ BATON_SMTP_URL: smtp.url, BATON_MAIL_FROM: "Baton <baton@example.test>" });
    },
    { scope: "worker" },
  ],
});
test.use({ consoleInstance: "team" });

const NEWCOMER = { name: "Grace Hopper", email: "grace@example.com", password: "a long and correct horse battery" };

function engineTokenOf(servers: Servers, email: string): string {
  return runSeed<{ token: string }>(servers, "engine-token-of.ts", [email]).token;
}

async function axeBothThemes(page: import("@playwright/test").Page, name: string) {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expect(page.locator("html")).toHaveClass(scheme === "dark" ? /(^|\s)dark(\s|$)/ : /^(?!.*\bdark\b)/);
      expect(await seriousAxeViolations(page), `${name} ${scheme} ${width}px`).toEqual([]);
      await screenshot(page, `${name}-${scheme}-${width}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

test("invite by mail, accept with a new account, make a viewer, remove: the engine token dies at once @db", async ({
  connected: page,
  servers,
  smtp,
  browser,
  baseURL,
}) => {
  test.setTimeout(180_000);
  const problems = watchForErrors(page);
  const consoleLines: string[] = [];
  page.on("console", (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  page.on("framenavigated", (f) => void (f === page.mainFrame() && consoleLines.push(`navigated: ${f.url()}`)));
  await page.goto("/team");
  await expect(page.getByRole("heading", { level: 1 })).toContainText(OWNER.teamName);
  await expect(page.getByTestId("member-row")).toHaveCount(1);
  await expect(page.getByTestId("invitations-empty")).toBeVisible();

  // The owner invites by email; the link is shown once, and the same link arrives by mail.
  await page.getByLabel("Email", { exact: true }).fill(NEWCOMER.email);
  await page.getByLabel("Role", { exact: true }).selectOption("member");
  await page.getByRole("button", { name: "Invite", exact: true }).click();
  const shown = page.getByTestId("invitation-url");
  await expect(shown).toContainText("/invite/");
  await expect(page.getByTestId("invitation-link")).toContainText(`Invitation mailed to ${NEWCOMER.email}`);
  await expect(page.getByTestId("invitation-row")).toHaveCount(1);
  const mail = await smtp.waitFor(NEWCOMER.email);
  const link = invitationLinkIn(mail);
  expect(await shown.textContent()).toBe(link);
  await axeBothThemes(page, "team-owner");

  // A second browser context (the newcomer) opens the mailed link and creates an account.
  const newcomer = await browser.newContext({ baseURL });
  const p = await newcomer.newPage();
  try {
    await p.goto(new URL(link).pathname);
    await expect(p.getByRole("heading", { level: 1 })).toHaveText(`Join ${OWNER.teamName}`);
    await expect(p.getByLabel("Email", { exact: true })).toHaveValue(NEWCOMER.email);
    await axeBothThemes(p, "invite-new-account");
    await p.getByLabel("Your name").fill(NEWCOMER.name);
    await p.getByLabel("Password", { exact: true }).fill(NEWCOMER.password);
    await p.getByRole("button", { name: "Create account and join" }).click();
    await p.waitForURL(/\/sandboxes/);

    // The member connects to the local engine: a token of the team's engine account, their own.
    const connect = await p.request.post("/api/connections/local-engine", { headers: { origin: baseURL! } });
    expect(connect.status(), await connect.text()).toBe(201);
    let token = engineTokenOf(servers, NEWCOMER.email);
    const engineRead = async () =>
      (await fetch(`${servers.engine.url}/sandboxes`, { headers: { authorization: `Bearer ${token}` } })).status;
    expect(await engineRead()).toBe(200);

    // The used link says so.
    const again = await newcomer.newPage();
    await again.goto(new URL(link).pathname);
    await expect(again.getByTestId("invitation-state")).toHaveAttribute("data-state", "used");
    await again.close();

    // The owner sees them, and makes them a viewer.
    await page.reload();
    const row = page.getByTestId("member-row").filter({ hasText: NEWCOMER.email });
    await expect(row).toBeVisible();
    await row.getByTestId("role-select").selectOption("viewer");
    await expect(row.getByTestId("role-select")).toHaveValue("viewer");
    await expect.poll(async () => (await page.request.get("/api/team/members")).ok()).toBe(true);

    // As a viewer: a sandbox of the team offers no Terminate, and the API refuses it.
    const sbx = await servers.engine.api<{ id: string }>("POST", "/sandboxes", { template: "python-3.12" });
    expect(sbx.status, sbx.text).toBe(201);
    try {
      await p.goto(`/sandboxes/${sbx.body.id}`);
      await expect(p.getByTestId("sandbox-status").filter({ visible: true })).toHaveText(/running/i);
      await expect(p.getByRole("button", { name: "Terminate…", exact: true })).toHaveCount(0);
      const terminate = await p.request.delete(`/api/v1/sandboxes/${sbx.body.id}`, { headers: { origin: baseURL! } });
      expect(terminate.status()).toBe(403);
    } finally {
      await servers.engine.api("DELETE", `/sandboxes/${sbx.body.id}`);
    }

    // Made a viewer, they hold a new read-only token of the team (the write one was revoked):
    // the one they hold now is what removal must kill.
    token = engineTokenOf(servers, NEWCOMER.email);
    expect(await engineRead()).toBe(200);

    // The owner removes them, after a confirmation: their engine token is refused at once.
    await row.getByRole("button", { name: `Remove ${NEWCOMER.email}` }).click();
    const dialog = page.getByRole("dialog");
    await expect(dialog).toContainText("Their sandboxes stay with the team");
    await dialog.getByRole("button", { name: "Remove member" }).click();
    await expect(page.getByTestId("member-row").filter({ hasText: NEWCOMER.email })).toHaveCount(0);
    expect(await engineRead()).toBe(401);
    // And the console no longer lets them into the team.
    const members = await p.request.get("/api/team/members");
    expect(members.status()).toBe(403);
  } finally {
    await newcomer.close();
  }

  // The audit log finds each of these actions by query and by the filter controls (the same rows),
  // and the CSV export of a filter holds exactly the rows shown.
  await page.goto("/audit");
  await expect(page.getByRole("heading", { level: 1, name: "Audit log" })).toBeVisible();
  await expect(page.locator("[data-testid=audit-table]")).toBeVisible();
  // Said here rather than only at the end: a hydration error would show as a second, client-made
  // filter form below (seen once in CI), and the lookup by label would fail without saying why.
  expect(problems, "the audit log's first render").toEqual([]);
  // One search form, and it stays one: a second, client-made copy of the page's form has appeared
  // twice in CI (never locally, 46 runs), right after the table showed. A transient copy (a render
  // being swapped in) settles here; a lasting one fails with the page's console, to find its cause.
  await expect(page.getByRole("search", { name: "Audit log search" }))
    .toHaveCount(1)
    .catch((err: Error) => {
      throw new Error(`${err.message}\nThe page's console since the test began:\n${consoleLines.join("\n")}`);
    });
  const shownIds = () =>
    page
      .locator("[data-testid=audit-table] tbody tr[data-audit-id]")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-audit-id")));
  for (const action of ["invitation.create", "invitation.accept", "member.role_change", "member.remove"]) {
    await page.getByLabel("Query", { exact: true }).fill(`action:${action}`);
    await page.getByRole("button", { name: "Search" }).click();
    await expect(page.getByLabel("Action", { exact: true })).toHaveValue(action);
    const rows = page.locator("[data-testid=audit-table] tbody tr[data-audit-id]");
    const actionsShown = () => rows.evaluateAll((rs) => rs.map((r) => r.getAttribute("data-action")));
    await expect.poll(async () => new Set(await actionsShown())).toEqual(new Set([action]));
    const byQuery = await shownIds();
    await page.getByRole("button", { name: "Clear" }).click();
    await expect(page.getByLabel("Query", { exact: true })).toHaveValue("");
    await page.getByLabel("Action", { exact: true }).fill(action);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect(page.getByLabel("Query", { exact: true })).toHaveValue(`action:${action}`);
    await expect.poll(shownIds, { message: action }).toEqual(byQuery);
    if (action === "member.role_change") {
      const download = page.waitForEvent("download");
      await page.getByTestId("audit-export-csv").click();
      const csv = fs
        .readFileSync(await (await download).path(), "utf8")
        .trim()
        .split(/\r?\n/);
      const idAt = csv[0]!.split(",").indexOf("id");
      expect(csv.slice(1).map((line) => line.split(",")[idAt])).toEqual(byQuery);
    }
  }
  expect(problems).toEqual([]);
});

test("a revoked link says so on the invitation page @db", async ({ connected: page, browser, baseURL }) => {
  const res = await page.request.post("/api/team/invitations", {
    data: { email: "revoked@example.com", role: "viewer" },
    headers: { origin: baseURL! },
  });
  expect(res.status()).toBe(201);
  const issued = (await res.json()) as { link: string; invitation: { id: string } };
  await page.goto("/team");
  const row = page.getByTestId("invitation-row").filter({ hasText: "revoked@example.com" });
  await row.getByRole("button", { name: /^Revoke/ }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Revoke invitation" }).click();
  await expect(row).toHaveCount(0);

  const visitor = await browser.newContext({ baseURL });
  try {
    const p = await visitor.newPage();
    await p.goto(new URL(issued.link).pathname);
    await expect(p.getByTestId("invitation-state")).toHaveAttribute("data-state", "revoked");
    await expect(p.getByRole("heading", { level: 1 })).toHaveText("This invitation was withdrawn");
    await axeBothThemes(p, "invite-revoked");
  } finally {
    await visitor.close();
  }
});
