import { seriousAxeViolations } from "./a11y";
import { expect, test } from "./fixtures";
import { screenshot, watchForErrors, teamHref } from "./helpers";

// Snapshots and forks against the real engine: a sandbox with a file is snapshotted from its page,
// the list shows the snapshot, two children are forked from its page, the fork tree shows both
// running (and a child has the file), then the snapshot is deleted after a confirmation.
test.use({ consoleInstance: "snapshots" });

test("snapshot from a sandbox's page → listed → fork two → the tree shows both running → delete", async ({
  connected: page,
  servers,
}) => {
  test.setTimeout(180_000);
  const problems = watchForErrors(page);
  const api = servers.engine.api.bind(servers.engine);
  const created = await api<{ id: string }>("POST", "/sandboxes", { template: "python-3.12", timeout_seconds: 900 });
  expect(created.status).toBe(201);
  const source = created.body.id;
  const wrote = await api<{ exit_code: number }>("POST", `/sandboxes/${source}/exec`, {
    command: "echo forked-state > /workspace/state.txt",
  });
  expect(wrote.body.exit_code).toBe(0);

  // Snapshot… from the sandbox's own page: a name, progress, the result linked.
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(`/sandboxes/${source}`);
  await expect(page.getByRole("heading", { level: 1, name: source })).toBeVisible();
  await page.getByRole("button", { name: "Snapshot…" }).click();
  const dialog = page.getByRole("dialog", { name: `Snapshot ${source}` });
  await expect(dialog).toBeVisible();
  const name = dialog.getByLabel("Name");
  await expect(name).toHaveValue(/^python-3\.12-\d{8}-\d{4}$/);
  await name.fill("snap_bad");
  await name.blur();
  await expect(dialog.getByText('Names may not start with "snap_" (ids do).')).toBeVisible();
  await name.fill("e2e-warm");
  await dialog.getByText("Show code").click();
  await expect(dialog.getByTestId("snapshot-code")).toContainText('sbx.snapshot(name="e2e-warm")');
  expect(await seriousAxeViolations(page)).toEqual([]);
  await dialog.getByRole("button", { name: "Take snapshot" }).click();
  await expect(dialog.getByTestId("snapshot-created")).toContainText("Snapshot e2e-warm is ready");
  await expect(dialog.getByTestId("snapshot-created")).toContainText("frozen for");
  const snapshots = await api<{ id: string; name: string }[]>("GET", "/snapshots");
  const snap = snapshots.body.find((s) => s.name === "e2e-warm")!;
  expect(snap).toBeTruthy();
  await expect(dialog.getByRole("link", { name: "Open snapshot" })).toHaveAttribute(
    "href",
    teamHref(`/snapshots/${snap.id}`),
  );
  await dialog.getByRole("button", { name: "Close" }).click();
  await expect(dialog).toBeHidden();

  // The list: the snapshot with its source (linked, running), template, region, size, memory and the cap.
  await page.goto("/snapshots");
  await expect(page.getByRole("heading", { level: 1, name: "Snapshots" })).toBeVisible();
  const row = page.getByTestId("snapshot-row").filter({ hasText: "e2e-warm" });
  await expect(row).toBeVisible();
  await expect(row.getByRole("link", { name: source })).toHaveAttribute("href", teamHref(`/sandboxes/${source}`));
  await expect(row).toContainText("running");
  await expect(row).toContainText("python-3.12");
  await expect(row).toContainText("fsn1");
  await expect(row).toContainText("No");
  const limits = await api<{ named_snapshots: number; max_named_snapshots: number }>("GET", "/sandboxes/limits");
  await expect(page.getByTestId("snapshot-cap")).toContainText(
    `${limits.body.named_snapshots} / ${limits.body.max_named_snapshots}`,
  );
  await expect(page.getByText("no CRIU on this kernel")).toBeVisible();
  await screenshot(page, "snapshots-list-light");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
  await screenshot(page, "snapshots-list-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "light" });

  // Fork two from the snapshot's page: progress with links, then the tree shows both running.
  await row.getByRole("link", { name: "e2e-warm", exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/snapshots/${snap.id}(?:[?&]team=[a-z0-9-]+)?$`));
  await expect(page.getByRole("heading", { level: 1, name: "e2e-warm" })).toBeVisible();
  await expect(page.getByText("No sandbox has been forked from it yet.")).toBeVisible();
  await page.getByLabel("How many children").fill("2");
  await page.getByRole("button", { name: "Show code" }).click();
  await expect(page.getByTestId("fork-code")).toContainText("for _ in range(2)");
  await page.getByRole("button", { name: "Fork 2 children" }).click();
  await expect(page.getByText("2 of 2 forked.")).toBeVisible({ timeout: 30_000 });
  const progress = page.getByTestId("fork-progress").getByRole("link");
  await expect(progress).toHaveCount(2);
  const kids = (await progress.allTextContents()).map((t) => t.trim());
  const tree = page.getByTestId("fork-children");
  for (const kid of kids) {
    const node = tree.getByTestId("fork-child").filter({ hasText: kid });
    await expect(node).toHaveAttribute("data-status", "running");
    await expect(node.getByRole("link", { name: kid })).toHaveAttribute("href", teamHref(`/sandboxes/${kid}`));
  }
  await expect(tree.getByTestId("fork-child")).toHaveCount(2);
  await expect(page.getByTestId("fork-count")).toHaveText("2 forks, 2 live");
  // A child has the source's file (its own copy).
  const read = await api<{ stdout: string }>("POST", `/sandboxes/${kids[0]}/exec`, {
    command: "cat /workspace/state.txt",
  });
  expect(read.body.stdout.trim()).toBe("forked-state");

  // The tree follows a child's status without a reload.
  expect((await api("DELETE", `/sandboxes/${kids[1]}`)).status).toBe(204);
  await expect(tree.getByTestId("fork-child").filter({ hasText: kids[1]! })).toHaveAttribute(
    "data-status",
    "terminated",
  );
  await expect(page.getByTestId("fork-count")).toHaveText("2 forks, 1 live");
  await screenshot(page, "snapshot-detail-light");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "dark" });
  await expect(page.locator("html")).toHaveClass(/(^|\s)dark(\s|$)/);
  await screenshot(page, "snapshot-detail-dark");
  expect(await seriousAxeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: "light" });

  // Delete, after a confirmation that says the forks keep their copies.
  await page.getByRole("button", { name: "Delete…" }).click();
  const confirm = page.getByRole("dialog", { name: "Delete snapshot e2e-warm?" });
  await expect(confirm).toContainText("keep their own copies");
  await confirm.getByRole("button", { name: "Cancel" }).click();
  await expect(confirm).toBeHidden();
  expect((await api("GET", `/snapshots/${snap.id}`)).status).toBe(200);
  await page.getByRole("button", { name: "Delete…" }).click();
  await confirm.getByRole("button", { name: "Delete snapshot" }).click();
  await expect(page).toHaveURL(/\/snapshots(?:[?&]team=[a-z0-9-]+)?$/);
  await expect(page.getByText("Deleted snapshot e2e-warm")).toBeVisible();
  await expect(page.getByText("No snapshots yet")).toBeVisible();
  expect((await api("GET", `/snapshots/${snap.id}`)).status).toBe(404);
  expect((await api<{ status: string }>("GET", `/sandboxes/${kids[0]}`)).body.status).toBe("running");

  for (const id of [source, kids[0]!]) await api("DELETE", `/sandboxes/${id}`);
  expect(problems).toEqual([]);
});

test("at the plan's cap, Snapshot… names the oldest snapshots to delete, and one delete makes room", async ({
  connected: page,
  servers,
}) => {
  test.setTimeout(120_000);
  // The refused create is the expected 409; anything else is a problem.
  const problems = watchForErrors(page, {
    allowStatus: (status, url) => status === 409 && /\/api\/v1\/sandboxes\/[^/]+\/snapshots$/.test(url),
  });
  const api = servers.engine.api.bind(servers.engine);
  const created = await api<{ id: string }>("POST", "/sandboxes", { template: "python-3.12", timeout_seconds: 600 });
  expect(created.status).toBe(201);
  const id = created.body.id;
  await page.goto(`/sandboxes/${id}`);
  await expect(page.getByRole("heading", { level: 1, name: id })).toBeVisible();

  // Fill the plan's cap behind the page's back (its limits were read when it loaded).
  const limits = await api<{ named_snapshots: number; max_named_snapshots: number }>("GET", "/sandboxes/limits");
  const cap = limits.body.max_named_snapshots;
  const names: string[] = [];
  for (let i = 1; i <= cap - limits.body.named_snapshots; i++) {
    const r = await api("POST", `/sandboxes/${id}/snapshots`, { name: `cap-${i}` });
    expect(r.status).toBe(201);
    names.push(`cap-${i}`);
  }

  await page.getByRole("button", { name: "Snapshot…" }).click();
  const dialog = page.getByRole("dialog", { name: `Snapshot ${id}` });
  await dialog.getByLabel("Name").fill("one-too-many");
  await dialog.getByRole("button", { name: "Take snapshot" }).click();
  const notice = dialog.getByRole("alert").filter({ hasText: `keeps at most ${cap} named snapshot` });
  await expect(notice).toBeVisible();
  const oldest = notice.getByRole("list", { name: "Oldest snapshots" }).getByRole("listitem");
  await expect(oldest).toHaveCount(Math.min(3, names.length));
  await expect(oldest.first().getByRole("link", { name: names[0]! })).toHaveAttribute("href", /\/snapshots\/snap_/);
  await screenshot(page, "snapshot-cap-light");
  expect(await seriousAxeViolations(page)).toEqual([]);

  // Delete the oldest from the notice (confirmed), then the same name goes through.
  await oldest
    .first()
    .getByRole("button", { name: `Delete ${names[0]}…` })
    .click();
  const confirm = page.getByRole("dialog", { name: `Delete snapshot ${names[0]}?` });
  await confirm.getByRole("button", { name: "Delete snapshot" }).click();
  await expect(confirm).toBeHidden();
  await expect(notice).toBeHidden();
  expect((await api("GET", `/snapshots/${names[0]}`)).status).toBe(404);
  await dialog.getByRole("button", { name: "Take snapshot" }).click();
  await expect(dialog.getByTestId("snapshot-created")).toContainText("Snapshot one-too-many is ready");

  const left = await api<{ id: string }[]>("GET", "/snapshots?limit=100");
  for (const s of left.body) await api("DELETE", `/snapshots/${s.id}`);
  await api("DELETE", `/sandboxes/${id}`);
  expect(problems).toEqual([]);
});
