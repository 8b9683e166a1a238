import type { Page } from "@playwright/test";
import { clearFaults, injectFault } from "../engine/test/helpers/engine";
import { seriousAxeViolations } from "./a11y";
import { expect, test } from "./fixtures";
import { screenshot, watchForErrors, teamHref } from "./helpers";

// /volumes against the real engine and a real `next start`: a volume created from the page, attached
// at sandbox create through the form, written through the Files tab's /persist, found again by a new
// sandbox after the first is terminated; delete refused while a sandbox holds it (naming the holder),
// grow (never shrink), lifetime set and cleared, a move to another region, delete once free.
test.use({ consoleInstance: "volumes" });
test.describe.configure({ mode: "serial" });

const SANDBOX_ID = /\/sandboxes\/(sbx_[A-Za-z0-9]+)(?:\?team=[a-z0-9-]+)?$/;
const NAME = `e2e-data-${Date.now()}`;
const CONTENT = `kept across sandboxes ${Date.now()}`;
let volumeId = "";
let firstHolder = "";

const row = (page: Page) => page.locator(`[data-testid=volume-row][data-name="${NAME}"]`);

/** Opens the row's Actions and picks one (a button that opens a dialog, or the "New sandbox" link). */
async function rowAction(page: Page, label: string, role: "button" | "link" = "button") {
  await row(page)
    .getByRole("button", { name: `Actions for ${NAME}` })
    .click();
  await row(page)
    .getByRole("group", { name: `Actions for ${NAME}` })
    .getByRole(role, { name: label })
    .click();
}

async function lookBothWays(page: Page, name: string) {
  await page.emulateMedia({ colorScheme: "light" });
  await screenshot(page, `${name}-light`);
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
  await screenshot(page, `${name}-dark`);
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "light" });
}

test("an empty account is taught, then a volume is created from the page with its code shown", async ({
  connected: page,
  servers,
}) => {
  const problems = watchForErrors(page);
  await page.goto("/volumes");
  await expect(page.getByRole("heading", { level: 1, name: "Volumes" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "No volumes yet" })).toBeVisible();
  await lookBothWays(page, "volumes-empty");

  await page.getByRole("button", { name: "New volume" }).click();
  const dialog = page.getByRole("dialog", { name: "New volume" });
  await expect(dialog).toBeVisible();
  // The regions come from the engine's limits.
  await expect(dialog.getByLabel("Region")).toContainText("hel1");
  // Bad input is named before anything is sent.
  await dialog.getByLabel("Name").fill("vol_looks_like_an_id");
  await dialog.getByLabel("Size (GiB)").fill("1000");
  await dialog.getByRole("button", { name: "Create volume" }).click();
  await expect(dialog).toContainText('A name may not start with "vol_": ids do.');
  await expect(dialog).toContainText("This plan allows volumes of at most");

  await dialog.getByLabel("Name").fill(NAME);
  await dialog.getByLabel("Size (GiB)").fill("1");
  await dialog.getByLabel("Region").selectOption("hel1");
  await dialog.getByText("Show code: create this volume").click();
  const code = dialog.getByTestId("volume-code");
  await expect(code).toContainText(`Volume.create("${NAME}", size_gb=1, region="hel1")`);
  await dialog.getByRole("tab", { name: "curl" }).click();
  await expect(code).toContainText("/v1/volumes");
  await expect(code).toContainText("Authorization: Bearer $ORKESTR_API_KEY");
  expect(await code.textContent()).not.toContain(servers.engine.token);
  await lookBothWays(page, "volumes-create");

  const create = page.waitForRequest((r) => r.method() === "POST" && new URL(r.url()).pathname === "/api/v1/volumes");
  await dialog.getByRole("button", { name: "Create volume" }).click();
  expect((await create).headers()["idempotency-key"]).toBeTruthy();
  await expect(dialog).toBeHidden();
  await expect(row(page)).toBeVisible();
  await expect(row(page).getByTestId("volume-status")).toHaveText("available");
  await expect(row(page)).toContainText("hel1");
  await expect(row(page).getByRole("meter")).toHaveAttribute("aria-valuetext", /of 1 GiB used/);

  const listed = await servers.engine.api<{ id: string; name: string; size_gb: number; region: string }[]>(
    "GET",
    "/volumes",
  );
  const mine = listed.body.find((v) => v.name === NAME);
  expect(mine).toMatchObject({ size_gb: 1, region: "hel1" });
  volumeId = mine!.id;
  expect(problems).toEqual([]);
});

test("attached at sandbox create through the form, written in /persist, found by the next sandbox", async ({
  connected: page,
  servers,
}) => {
  const problems = watchForErrors(page);
  await page.goto("/volumes");
  // The row's "New sandbox" opens the create form with the volume chosen.
  await rowAction(page, "New sandbox with it", "link");
  await expect(page.getByRole("heading", { level: 1, name: "Create a sandbox" })).toBeVisible();
  await expect(page.getByRole("radio", { name: /An existing volume/ })).toBeChecked();
  await expect(page.getByLabel("Which volume")).toHaveValue(volumeId);
  await expect(page.getByText("The sandbox runs in hel1, where the volume lives.")).toBeVisible();
  await page.getByRole("button", { name: "Create sandbox" }).click();
  await expect(page).toHaveURL(SANDBOX_ID, { timeout: 30_000 });
  firstHolder = SANDBOX_ID.exec(new URL(page.url()).pathname)![1]!;
  const sandbox = await servers.engine.api("GET", `/sandboxes/${firstHolder}`);
  expect(sandbox.body).toMatchObject({ region: "hel1", volume: { id: volumeId, mount_path: "/persist" } });

  // Files: /persist is offered beside /workspace, says which volume it is; a file written there.
  await page.goto(`/sandboxes/${firstHolder}/files`);
  const location = page.getByRole("group", { name: "Location" });
  await location.getByRole("button", { name: /\/persist/ }).click();
  await expect(page.getByTestId("persist-note")).toContainText(NAME);
  await page.getByRole("button", { name: "New file" }).click();
  const fileDialog = page.getByRole("dialog", { name: "New file" });
  await fileDialog.getByLabel("File name").fill("note.txt");
  await fileDialog.getByRole("button", { name: "Create file" }).click();
  const editor = page.getByRole("textbox", { name: "Edit note.txt" });
  await editor.fill(CONTENT);
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.getByText("Saved /persist/note.txt")).toBeVisible();
  await screenshot(page, "volumes-persist-files-light");

  // The note's link opens the volumes page with this volume's row marked; it shows the holder, linked.
  await page.getByTestId("persist-note").getByRole("link", { name: NAME }).click();
  await expect(page).toHaveURL(new RegExp(`/volumes\\?volume=${volumeId}(?:[?&]team=[a-z0-9-]+)?$`));
  await expect(row(page)).toHaveAttribute("aria-current", "true");
  await expect(row(page).getByTestId("volume-status")).toHaveText("attached");
  await expect(row(page).getByRole("link", { name: firstHolder })).toHaveAttribute(
    "href",
    teamHref(`/sandboxes/${firstHolder}`),
  );

  // Terminated through its page; the volume is free again.
  await page.goto(`/sandboxes/${firstHolder}`);
  await page.getByRole("button", { name: "Terminate…" }).click();
  await page
    .getByRole("dialog", { name: `Terminate ${firstHolder}?` })
    .getByRole("button", { name: "Terminate sandbox" })
    .click();
  await expect(page.getByTestId("sandbox-status")).toHaveText("terminated");
  await page.goto("/volumes");
  await expect(row(page).getByTestId("volume-status")).toHaveText("available");

  // A brand-new sandbox with the volume reads the file.
  const second = await servers.engine.api<{ id: string }>("POST", "/sandboxes", {
    template: "python-3.12",
    network: "off",
    volume: NAME,
  });
  expect(second.status, second.text).toBe(201);
  const holder = second.body.id;
  const read = await servers.engine.api("POST", `/sandboxes/${holder}/exec`, { command: "cat /persist/note.txt" });
  expect(read.body.stdout, read.text).toBe(CONTENT);

  // Delete is refused while it is held, naming the holder with a link: in the dialog…
  await page.reload();
  await expect(row(page).getByRole("link", { name: holder })).toBeVisible();
  await rowAction(page, "Delete…");
  const del = page.getByRole("dialog", { name: "Delete this volume?" });
  const refusal = del.getByTestId("delete-refused");
  await expect(refusal).toContainText(`terminate ${holder} first`);
  await expect(refusal.getByRole("link", { name: holder })).toHaveAttribute("href", teamHref(`/sandboxes/${holder}`));
  await expect(del.getByRole("button", { name: "Delete volume" })).toBeDisabled();
  await lookBothWays(page, "volumes-delete-refused");
  await del.getByRole("button", { name: "Cancel" }).click();
  await expect(del).toBeHidden();
  // …and by the API behind it (through Baton's proxy), whose detail names the holder too.
  const refused = await page.request.delete(`/api/v1/volumes/${volumeId}`, {
    headers: { origin: servers.baseURL },
  });
  expect(refused.status()).toBe(409);
  const body = (await refused.json()) as { code: string; detail: string };
  expect(body.code).toBe("volume_in_use");
  expect(body.detail).toContain(holder);

  // Grow and move wait for the volume to be free, and say who holds it.
  await rowAction(page, "Grow…");
  const grow = page.getByRole("dialog", { name: `Grow volume: ${NAME}` });
  await expect(grow.getByRole("link", { name: holder })).toBeVisible();
  await expect(grow.getByRole("button", { name: "Grow volume" })).toBeDisabled();
  await grow.getByRole("button", { name: "Cancel" }).click();

  const ended = await servers.engine.api("DELETE", `/sandboxes/${holder}`);
  expect(ended.status, ended.text).toBeLessThan(300);
  await page.reload();
  await expect(row(page).getByTestId("volume-status")).toHaveText("available");
  expect(problems).toEqual([]);
});

test("grow never shrinks; the lifetime is set with a countdown and cleared; a move shows its progress", async ({
  connected: page,
  servers,
}) => {
  const problems = watchForErrors(page);
  await page.goto("/volumes");
  // The row's actions open and close from the keyboard; Escape hands focus back.
  const actions = row(page).getByRole("button", { name: `Actions for ${NAME}` });
  await actions.focus();
  await page.keyboard.press("Enter");
  await expect(actions).toHaveAttribute("aria-expanded", "true");
  await page.keyboard.press("Tab");
  await expect(row(page).getByRole("link", { name: "New sandbox with it" })).toBeFocused();
  await lookBothWays(page, "volumes-actions");
  await page.keyboard.press("Escape");
  await expect(actions).toHaveAttribute("aria-expanded", "false");
  await expect(actions).toBeFocused();

  // Grow: smaller is refused by the form, the API's own refusal is worded the same way.
  await rowAction(page, "Grow…");
  const grow = page.getByRole("dialog", { name: `Grow volume: ${NAME}` });
  const size = grow.getByLabel("New size (GiB)");
  await size.fill("0");
  await grow.getByRole("button", { name: "Grow volume" }).click();
  await expect(grow).toContainText("Volumes only grow: 0 GiB is smaller than its 1 GiB.");
  await size.fill("2");
  await grow.getByText("Show code: grow this volume").click();
  await expect(grow.getByTestId("volume-code")).toContainText(`Volume.update("${volumeId}", size_gb=2)`);
  await grow.getByRole("button", { name: "Grow volume" }).click();
  await expect(grow).toBeHidden();
  await expect(row(page).getByRole("meter")).toHaveAttribute("aria-valuetext", /of 2 GiB used/);
  expect((await servers.engine.api("GET", `/volumes/${volumeId}`)).body.size_gb).toBe(2);
  const shrink = await page.request.patch(`/api/v1/volumes/${volumeId}`, {
    headers: { origin: servers.baseURL },
    data: { size_gb: 1 },
  });
  expect(shrink.status()).toBe(409);
  expect(((await shrink.json()) as { code: string }).code).toBe("cannot_shrink");

  // Lifetime: 6 hours, with the deadline counted from creation; the row counts down.
  await rowAction(page, "Set lifetime…");
  const lifetime = page.getByRole("dialog", { name: `Max lifetime: ${NAME}` });
  await lifetime.getByRole("radio", { name: "Hours" }).check();
  await lifetime.getByLabel("Number of hours").fill("6");
  await expect(lifetime).toContainText("Counted from the volume's creation: deleted with its data at");
  await lookBothWays(page, "volumes-lifetime");
  await lifetime.getByRole("button", { name: "Set lifetime" }).click();
  await expect(lifetime).toBeHidden();
  const cell = row(page).getByTestId("volume-lifetime");
  await expect(cell).toContainText("6 hours");
  await expect(cell).toContainText(/expires in 5h 5\dm/);
  expect((await servers.engine.api("GET", `/volumes/${volumeId}`)).body.max_lifetime_hours).toBe(6);
  // Cleared again.
  await rowAction(page, "Set lifetime…");
  await lifetime.getByRole("radio", { name: "Keep until deleted" }).check();
  await lifetime.getByText("Show code: clear the lifetime").click();
  await expect(lifetime.getByTestId("volume-code")).toContainText("max_lifetime_days=None");
  await lifetime.getByRole("button", { name: "Clear lifetime" }).click();
  await expect(lifetime).toBeHidden();
  await expect(row(page)).toContainText("Until deleted");
  const cleared = (await servers.engine.api("GET", `/volumes/${volumeId}`)).body;
  expect(cleared).toMatchObject({ max_lifetime_hours: null, expires_at: null });

  // Move to fsn1: the dialog follows the volume until it lives there.
  await rowAction(page, "Move to another region…");
  const move = page.getByRole("dialog", { name: `Move to another region: ${NAME}` });
  await move.getByLabel("To region").selectOption("fsn1");
  await move.getByRole("button", { name: "Move volume" }).click();
  await expect(move.getByTestId("move-done")).toContainText("Moved to fsn1", { timeout: 30_000 });
  await move.getByRole("button", { name: "Close" }).click();
  await expect(row(page)).toContainText("fsn1");
  expect((await servers.engine.api("GET", `/volumes/${volumeId}`)).body).toMatchObject({
    region: "fsn1",
    status: "available",
  });
  await lookBothWays(page, "volumes-list");
  expect(problems).toEqual([]);
});

test("a free volume is deleted after confirmation", async ({ connected: page, servers }) => {
  const problems = watchForErrors(page);
  await page.goto("/volumes");
  await rowAction(page, "Delete…");
  const del = page.getByRole("dialog", { name: "Delete this volume?" });
  await expect(del).toContainText("This cannot be undone.");
  await del.getByText("Show code: delete this volume").click();
  await expect(del.getByTestId("volume-code")).toContainText(`Volume.delete("${volumeId}")`);
  // Cancel keeps it.
  await del.getByRole("button", { name: "Cancel" }).click();
  await expect(row(page)).toBeVisible();
  await rowAction(page, "Delete…");
  await del.getByRole("button", { name: "Delete volume" }).click();
  await expect(del).toBeHidden();
  await expect(row(page)).toHaveCount(0);
  await expect(page.getByRole("heading", { name: "No volumes yet" })).toBeVisible();
  expect((await servers.engine.api("GET", `/volumes/${volumeId}`)).status).toBe(404);
  expect(problems).toEqual([]);
});

test("a failing list says what happened and what Baton does, then recovers by itself", async ({
  connected: page,
  servers,
}) => {
  const problems = watchForErrors(page, {
    allowStatus: (status, url) => status >= 500 && url.includes("/api/v1/volumes"),
  });
  await injectFault(servers.engine, { kind: "error", status: 500, path: "^/v1/volumes$", method: "GET", count: 2 });
  try {
    await page.goto("/volumes");
    const notice = page.getByTestId("retry-notice");
    await expect(notice).toContainText("Your volumes could not be loaded yet");
    await expect(notice).toContainText("The orkestr API had an internal error (500)");
    await expect(notice.getByRole("timer")).toHaveText(/Retrying in \d+ s \(attempt [2-4]\)|Retrying now/);
    // The retries get through: the list shows, no reload.
    await expect(page.getByRole("heading", { name: "No volumes yet" })).toBeVisible({ timeout: 30_000 });
    await expect(notice).toBeHidden();
  } finally {
    await clearFaults(servers.engine);
  }
  expect(problems).toEqual([]);
});
