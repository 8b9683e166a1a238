import type { Page } from "@playwright/test";
import { seriousAxeViolations } from "./a11y";
import { expect, test } from "./fixtures";
import { addTeamUser, screenshot, signedInContext, watchForErrors } from "./helpers";

// Several teams per user (issue 21): create a team, switch from the header and from ⌘K, each tab
// keeps the team its URL names (?team=<slug>), and a member of team B who pastes team A's sandbox
// URL sees "not found". The switcher and the create dialog are axe clean, light and dark, 1280 and 390.
test.use({ consoleInstance: "teams" });

const OTHER = { email: "bea@example.com", password: "yet another correct horse battery", team: "Bea Labs" };

const teamOf = (page: Page) => new URL(page.url()).searchParams.get("team");
const switcher = (page: Page) => page.getByRole("button", { name: /^Team: / });

async function createTeam(page: Page, name: string): Promise<void> {
  await switcher(page).click();
  await page.getByRole("menuitem", { name: "Create team…" }).click();
  const dialog = page.getByRole("dialog", { name: "Create team" });
  await expect(dialog).toBeVisible();
  await dialog.getByLabel("Team name").fill(name);
  await dialog.getByRole("button", { name: "Create team" }).click();
  await expect(switcher(page)).toContainText(name);
}

test("create a team, switch from the header and from ⌘K; each tab keeps its own team", async ({
  connected: page,
  context,
}) => {
  test.setTimeout(120_000);
  const problems = watchForErrors(page);
  await page.goto("/sandboxes");
  // The URL says which team: the default one is added to a URL without it.
  await expect(page).toHaveURL(/[?&]team=[a-z0-9-]+/);
  const first = teamOf(page)!;
  const firstName = (await switcher(page).innerText()).replace(/^Team:\s*/, "").trim();

  await createTeam(page, "Second Team");
  await expect(page).toHaveURL(/\/sandboxes\?team=second-team$/);
  // A new team has no connection of its own: nothing of the first team's is listed.
  await expect(page.getByText(/no orkestr connection for Second Team/i).first()).toBeVisible();

  // Every console link keeps the team.
  const volumes = page.getByRole("navigation").getByRole("link", { name: "Volumes" }).first();
  await expect(volumes).toHaveAttribute("href", "/volumes?team=second-team");

  // Header: back to the first team, on the same page.
  await page.goto("/volumes?team=second-team");
  await switcher(page).click();
  await expect(page.getByRole("menuitemradio", { name: /Second Team/ })).toHaveAttribute("aria-checked", "true");
  await page.getByRole("menuitemradio", { name: new RegExp(firstName) }).click();
  await expect(page).toHaveURL(new RegExp(`/volumes\\?team=${first}$`));

  // ⌘K: type the team's name, Enter switches to it (the first item shown is the one selected).
  // (After a full page load: pressed again until the page has hydrated and listens.)
  const palette = page.getByRole("dialog", { name: "Command palette" });
  await expect(async () => {
    if (!(await palette.isVisible())) await page.keyboard.press("Control+k");
    await expect(palette).toBeVisible({ timeout: 5_000 });
  }).toPass({ timeout: 30_000 });
  await palette.getByRole("combobox").fill("second");
  await expect(palette.getByRole("option", { name: /Switch to Second Team/ })).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/volumes\?team=second-team$/);

  // Two tabs of one browser: switching in one leaves the other in its team.
  const other = await context.newPage();
  await other.goto(`/sandboxes?team=${first}`);
  await expect(switcher(other)).toContainText(firstName);
  await switcher(page).click();
  await page.getByRole("menuitemradio", { name: new RegExp(firstName) }).click();
  await expect(page).toHaveURL(new RegExp(`team=${first}$`));
  await other.bringToFront();
  await other.goto("/sandboxes?team=second-team");
  await page.bringToFront();
  await page.reload();
  await expect(page).toHaveURL(new RegExp(`team=${first}$`));
  await expect(switcher(page)).toContainText(firstName);
  await expect(switcher(other)).toContainText("Second Team");
  // The other tab's API calls act in its own team: its list is the second team's (no connection).
  await expect(other.getByText(/no orkestr connection for Second Team/i).first()).toBeVisible();
  await other.close();
  expect(problems).toEqual([]);
});

test("a member of team B who pastes team A's sandbox URL sees not found", async ({
  connected: page,
  servers,
  browser,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const created = await page.request.post("/api/v1/sandboxes", {
    data: { template: "python-3.12" },
    headers: { origin: baseURL! },
  });
  expect(created.status(), await created.text()).toBe(201);
  const id = ((await created.json()) as { id: string }).id;
  await page.goto(`/sandboxes/${id}`);
  await expect(page).toHaveURL(/[?&]team=/);
  const pasted = new URL(page.url()).pathname + new URL(page.url()).search;

  addTeamUser(servers, OTHER, OTHER.team);
  const other = await signedInContext(browser, baseURL!, OTHER);
  const otherPage = await other.newPage();
  const res = await otherPage.goto(pasted);
  expect(res?.status()).toBe(404);
  await expect(otherPage.getByRole("heading", { name: /not found/i })).toBeVisible();
  await expect(otherPage.getByText(id)).toHaveCount(0);
  // Without the team, in their own team: that sandbox does not exist there either.
  await otherPage.goto(`/sandboxes/${id}`);
  await expect(otherPage).toHaveURL(/team=bea-labs/);
  await expect(otherPage.getByText(/not found|no orkestr connection/i).first()).toBeVisible();
  await other.close();
});

for (const width of [1280, 390]) {
  for (const scheme of ["light", "dark"] as const) {
    test(`the team switcher and the create dialog are axe clean (${width} px, ${scheme})`, async ({
      signedIn: page,
    }) => {
      await page.setViewportSize({ width, height: 900 });
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto("/sandboxes");
      await switcher(page).click();
      await expect(page.getByRole("menu")).toBeVisible();
      expect(await seriousAxeViolations(page)).toEqual([]);
      await screenshot(page, `team-switcher-${width}-${scheme}`);
      await page.keyboard.press("Escape");
      await expect(page.getByRole("menu")).toHaveCount(0);
      await expect(switcher(page)).toBeFocused();
      // Keyboard: ArrowDown opens the menu, End reaches "Create team…", Enter opens the dialog.
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("End");
      await expect(page.getByRole("menuitem", { name: "Create team…" })).toBeFocused();
      await page.keyboard.press("Enter");
      const dialog = page.getByRole("dialog", { name: "Create team" });
      await expect(dialog).toBeVisible();
      expect(await seriousAxeViolations(page)).toEqual([]);
      await screenshot(page, `create-team-${width}-${scheme}`);
      await page.keyboard.press("Escape");
      await expect(dialog).toBeHidden();
    });
  }
}
