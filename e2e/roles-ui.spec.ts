import type { BrowserContext, Page } from "@playwright/test";
import { seriousAxeViolations } from "./a11y";
import { expect, test, type Servers } from "./fixtures";
import { addMember, screenshot, signedInContext } from "./helpers";

// Roles in the UI (issue 21): what a role may not do is not offered, and the page says why where
// the control would be. A viewer and a member of the owner's team, each on the team's local-engine
// account, go through every page with write controls; the API still answers the viewer's writes
// with 403. Also the creator stamp as the list shows it (`/sandboxes?creator=`).
test.use({ consoleInstance: "roles-ui" });

const VIEWER = { email: "vera-viewer@example.com", password: "a viewer's correct horse battery" };
const MEMBER = { email: "max-member@example.com", password: "a member's correct horse battery" };
const VIEWER_REASON = "ask an admin for the member role";

/** Axe-clean at 1280 and 390 px, light and dark; one screenshot per width and scheme. */
async function checkA11y(page: Page, name: string): Promise<void> {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await seriousAxeViolations(page), `${name} ${width} ${scheme}`).toEqual([]);
      if (width === 1280 || scheme === "light") await screenshot(page, `roles-${name}-${width}-${scheme}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.emulateMedia({ colorScheme: "light" });
}

/** The resources the pages show: a sandbox with a file (network on, preview token on), a volume, a snapshot, a webhook, a template. */
async function resources(servers: Servers) {
  const sbx = await servers.engine.api<{ id: string }>("POST", "/sandboxes", {
    template: "python-3.12",
    network: "restricted",
    preview_auth: true,
    metadata: { purpose: "roles-ui" },
  });
  expect(sbx.status, sbx.text).toBe(201);
  const id = sbx.body.id;
  // A file to browse, and a server on port 8000 (its preview is protected: preview_auth).
  const wrote = await servers.engine.api<{ exit_code: number }>("POST", `/sandboxes/${id}/exec`, {
    command: "echo hello > /workspace/notes.txt && nohup python3 -m http.server 8000 >/dev/null 2>&1 &",
  });
  expect(wrote.body.exit_code, wrote.text).toBe(0);
  await expect
    .poll(
      async () =>
        (await servers.engine.api<{ listening?: boolean }>("GET", `/sandboxes/${id}/previews/8000`)).body.listening,
      {
        timeout: 15_000,
      },
    )
    .toBe(true);
  const volume = await servers.engine.api<{ id: string }>("POST", "/volumes", {
    name: `roles-${Date.now()}`,
    size_gb: 1,
  });
  expect(volume.status, volume.text).toBe(201);
  const snapshot = await servers.engine.api<{ id: string }>("POST", `/sandboxes/${id}/snapshots`, {
    name: `roles-${Date.now()}`,
  });
  expect(snapshot.status, snapshot.text).toBe(201);
  const webhook = await servers.engine.api<{ id: string }>("POST", "/webhooks", {
    url: "https://example.invalid/hook",
    description: "Roles UI",
  });
  expect(webhook.status, webhook.text).toBe(201);
  const template = await servers.engine.api<{ id: string }>("POST", "/templates", {
    name: `roles-${Date.now()}`,
    base_image: "python-3.12",
    steps: ["true"],
  });
  expect([201, 202], template.text).toContain(template.status); // 202: building
  return {
    id,
    volume: volume.body.id,
    snapshot: snapshot.body.id,
    webhook: webhook.body.id,
    template: template.body.id,
  };
}

type Resources = Awaited<ReturnType<typeof resources>>;
let made: Resources | null = null;
let viewerContext: BrowserContext | null = null;
let memberContext: BrowserContext | null = null;
let memberId = "";

test.beforeAll(async ({ browser, servers, localEngine }) => {
  void localEngine; // the owner's connection: servers.engine.api acts in the team's account
  test.setTimeout(180_000);
  made = await resources(servers);
  addMember(servers, VIEWER, "viewer");
  memberId = addMember(servers, MEMBER, "member").userId;
  viewerContext = await signedInContext(browser, servers.baseURL, VIEWER);
  memberContext = await signedInContext(browser, servers.baseURL, MEMBER);
});

test.afterAll(async ({ servers }) => {
  await viewerContext?.close();
  await memberContext?.close();
  if (made) await servers.engine.api("DELETE", `/sandboxes/${made.id}`);
});

test("a viewer is offered no write control, and each page says why @db", async () => {
  test.setTimeout(300_000);
  const r = made!;
  const page = await viewerContext!.newPage();

  // The list: no Create sandbox, no selection for bulk actions; the reason in the header.
  await page.goto("/sandboxes");
  await expect(page.getByRole("link", { name: r.id })).toBeVisible();
  await expect(page.getByRole("link", { name: "Create sandbox" })).toHaveCount(0);
  await expect(page.getByRole("note").filter({ hasText: "Viewers can't create sandboxes" })).toContainText(
    VIEWER_REASON,
  );
  await expect(page.getByRole("checkbox", { name: `Select ${r.id}` })).toHaveCount(0);
  await checkA11y(page, "viewer-sandboxes");

  // The detail: no lifecycle buttons (no Terminate), no metadata editing; settings disabled and
  // described by the reason (aria-describedby, not a title).
  await page.goto(`/sandboxes/${r.id}`);
  await expect(page.getByTestId("sandbox-status")).toHaveText(/running/i);
  for (const name of ["Pause", "Keep alive…", "Snapshot…", "Terminate…", "Edit metadata"])
    await expect(page.getByRole("button", { name, exact: true })).toHaveCount(0);
  await expect(page.getByRole("note").filter({ hasText: "Viewers can't pause, resume or terminate" })).toBeVisible();
  const autoResume = page.getByRole("checkbox", { name: /Resume automatically/ });
  await expect(autoResume).toBeDisabled();
  await expect(autoResume).toHaveAccessibleDescription(/Viewers can't change these settings: ask an admin/);
  await checkA11y(page, "viewer-sandbox-detail");

  // Files: browse, open, download; no upload, new, edit or delete.
  await page.goto(`/sandboxes/${r.id}/files`);
  await expect(page.getByRole("button", { name: "Open file notes.txt" })).toBeVisible();
  for (const name of ["New folder", "New file", "Upload", "Delete notes.txt"])
    await expect(page.getByRole("button", { name, exact: true })).toHaveCount(0);
  await expect(page.getByRole("note").filter({ hasText: "Viewers can't upload, edit or delete files" })).toBeVisible();
  await page.getByRole("button", { name: "Open file notes.txt" }).click();
  await expect(page.getByRole("region", { name: "File /workspace/notes.txt" })).toContainText("hello");
  await expect(page.getByRole("button", { name: "Download notes.txt" }).first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Edit", exact: true })).toHaveCount(0);
  await checkA11y(page, "viewer-files");

  // Terminal: the reason instead of a terminal.
  await page.goto(`/sandboxes/${r.id}/terminal`);
  await expect(page.getByRole("heading", { name: "No terminal for your role" })).toBeVisible();
  await expect(page.getByRole("note").filter({ hasText: "terminal" })).toHaveText(
    "Viewers can't open a terminal: ask an admin for the member role.",
  );
  await expect(page.getByRole("button", { name: /Open terminal/ })).toHaveCount(0);
  await checkA11y(page, "viewer-terminal");

  // Previews: no port scans (each is an exec) and no token rotation; typing a port still works.
  await page.goto(`/sandboxes/${r.id}/previews?port=8000`);
  await expect(page.getByRole("note").filter({ hasText: "Viewers can't scan for listening ports" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Scan again for listening ports" })).toHaveCount(0);
  await expect(page.getByRole("heading", { name: "Port 8000 is protected" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Rotate and use a new token…" })).toHaveCount(0);
  await expect(page.getByRole("note").filter({ hasText: "Viewers can't rotate the preview token" })).toBeVisible();
  await expect(page.getByRole("textbox", { name: "Preview token" })).toBeVisible();
  await checkA11y(page, "viewer-previews");

  // Volumes, templates, snapshots, webhooks: listed, not changeable, and why.
  await page.goto("/volumes");
  await expect(page.getByText(/^roles-\d+$/).first()).toBeVisible();
  await expect(page.getByRole("button", { name: "New volume" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: /^Actions for/ })).toHaveCount(0);
  await expect(page.getByRole("note")).toContainText("Viewers can't create, grow, move or delete volumes");
  await checkA11y(page, "viewer-volumes");

  await page.goto("/templates");
  await expect(page.getByRole("link", { name: "Create template" })).toHaveCount(0);
  await expect(page.getByRole("note")).toContainText("Viewers can't create templates");
  await checkA11y(page, "viewer-templates");
  await page.goto(`/templates/${r.template}`);
  await expect(page.getByRole("heading", { name: "Build log" })).toBeVisible();
  for (const name of ["Delete"]) await expect(page.getByRole("button", { name, exact: true })).toHaveCount(0);
  await expect(page.getByRole("link", { name: "Edit as new template" })).toHaveCount(0);
  await expect(page.getByRole("link", { name: "Create sandbox from this" })).toHaveCount(0);
  await expect(page.getByRole("note")).toContainText("Viewers can't build or delete templates");

  await page.goto("/snapshots");
  await expect(
    page
      .getByText(r.snapshot)
      .or(page.getByRole("link", { name: /roles-/ }))
      .first(),
  ).toBeVisible();
  await expect(page.getByRole("link", { name: /^Fork / })).toHaveCount(0);
  await expect(page.getByRole("button", { name: /^Delete / })).toHaveCount(0);
  await expect(page.getByRole("note")).toContainText("Viewers can't fork or delete snapshots");
  await checkA11y(page, "viewer-snapshots");

  await page.goto("/webhooks");
  await expect(page.getByRole("link", { name: "Roles UI" }).or(page.getByText("Roles UI")).first()).toBeVisible();
  await expect(page.getByRole("button", { name: /Create webhook/ })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Receive in Baton" })).toHaveCount(0);
  await expect(page.getByRole("note")).toContainText("Viewers can't create webhooks");
  await checkA11y(page, "viewer-webhooks");
  await page.goto(`/webhooks/${r.webhook}`);
  await expect(page.getByRole("note")).toContainText("Viewers can't edit, test or delete webhooks");
  await expect(page.getByRole("heading", { name: "Roles UI" })).toBeVisible();
  for (const name of ["Send test", "Disable", "Rotate secret…", "Delete…", "Edit…"])
    await expect(page.getByRole("button", { name, exact: true })).toHaveCount(0);
  await page.close();
});

test("what the viewer is not offered, the API refuses with 403 @db", async ({ baseURL }) => {
  const r = made!;
  const api = viewerContext!.request;
  const origin = { origin: baseURL! };
  const writes = [
    api.post("/api/v1/sandboxes", { data: { template: "python-3.12" }, headers: origin }),
    api.delete(`/api/v1/sandboxes/${r.id}`, { headers: origin }),
    api.post(`/api/v1/sandboxes/${r.id}/pty`, { data: {}, headers: origin }),
    api.post(`/api/v1/sandboxes/${r.id}/exec`, { data: { command: "true" }, headers: origin }),
    api.delete(`/api/v1/sandboxes/${r.id}/files?path=%2Fworkspace%2Fnotes.txt`, { headers: origin }),
    api.delete(`/api/v1/volumes/${r.volume}`, { headers: origin }),
    api.delete(`/api/v1/snapshots/${r.snapshot}`, { headers: origin }),
    api.delete(`/api/v1/webhooks/${r.webhook}`, { headers: origin }),
    api.delete(`/api/v1/templates/${r.template}`, { headers: origin }),
  ];
  for (const res of await Promise.all(writes)) {
    expect(res.status(), res.url()).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe("forbidden");
  }
  // Reads still work.
  expect((await api.get(`/api/v1/sandboxes/${r.id}`)).status()).toBe(200);
});

test("a member is offered the write controls; the list filters by creator @db", async ({
  connected: owner,
  baseURL,
}) => {
  test.setTimeout(180_000);
  const r = made!;
  const page = await memberContext!.newPage();
  await page.goto("/sandboxes");
  await expect(page.getByRole("link", { name: "Create sandbox" })).toBeVisible();
  await expect(page.getByRole("checkbox", { name: `Select ${r.id}` })).toBeVisible();
  await page.goto(`/sandboxes/${r.id}`);
  for (const name of ["Pause", "Snapshot…", "Terminate…", "Edit metadata"])
    await expect(page.getByRole("button", { name, exact: true })).toBeVisible();
  await expect(page.getByTestId("read-only")).toHaveCount(0);
  await page.goto(`/sandboxes/${r.id}/files`);
  for (const name of ["New folder", "New file", "Upload"])
    await expect(page.getByRole("button", { name, exact: true })).toBeVisible();
  await expect(page.getByRole("button", { name: "Delete notes.txt" })).toBeVisible();
  await page.goto(`/sandboxes/${r.id}/terminal`);
  await expect(page.getByRole("button", { name: /Open terminal/ }).first()).toBeVisible();
  await page.goto(`/sandboxes/${r.id}/previews?port=8000`);
  await expect(page.getByRole("button", { name: "Scan again for listening ports" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Rotate and use a new token…" })).toBeVisible();
  await page.goto("/volumes");
  await expect(page.getByRole("button", { name: "New volume" })).toBeVisible();
  await page.goto("/templates");
  await expect(page.getByRole("link", { name: "Create template" }).first()).toBeVisible();
  await page.goto("/snapshots");
  await expect(page.getByRole("link", { name: /^Fork / }).first()).toBeVisible();
  await page.goto("/webhooks");
  await expect(page.getByRole("note")).toHaveCount(0);
  await page.goto(`/webhooks/${r.webhook}`);
  await expect(page.getByRole("button", { name: "Send test", exact: true })).toBeVisible();

  // A sandbox the member creates through Baton carries their stamp; the owner finds it by creator.
  const created = await page.request.post("/api/v1/sandboxes", {
    data: { template: "python-3.12", metadata: { purpose: "mine" } },
    headers: { origin: baseURL! },
  });
  expect(created.status()).toBe(201);
  const mine = (await created.json()) as { id: string; metadata: Record<string, string> };
  expect(mine.metadata["baton.user"]).toBe(memberId);
  try {
    await owner.goto(`/sandboxes?creator=${memberId}`);
    await expect(owner.getByTestId("creator-filter")).toHaveText(/Created by member/);
    await expect(owner.getByRole("link", { name: mine.id })).toBeVisible();
    await expect(owner.getByRole("link", { name: r.id })).toHaveCount(0);
    // The list names the member as its creator (their name from the team's members, not the id).
    const createdBy = (p: typeof owner, id: string) =>
      p.locator(`[role=row][data-sandbox-id="${id}"]`).getByTestId("created-by");
    await expect(createdBy(owner, mine.id)).toHaveText("member");
    await screenshot(owner, "roles-creator-filter-light");
    expect(await seriousAxeViolations(owner)).toEqual([]);
    await owner.getByRole("button", { name: "Remove the filter: created by member" }).click();
    await expect(owner).toHaveURL(/\/sandboxes(?:\?team=[a-z0-9-]+)?$/);
    await expect(owner.getByRole("link", { name: r.id })).toBeVisible();
    // The member's own filter says "you".
    await page.goto(`/sandboxes?creator=${memberId}`);
    await expect(page.getByTestId("creator-filter")).toHaveText(/Created by you/);
    await expect(page.getByRole("button", { name: "Only sandboxes I created" })).toHaveAttribute(
      "aria-pressed",
      "true",
    );
    await expect(createdBy(page, mine.id)).toHaveText("You");
    await page.goto(`/sandboxes/${mine.id}`);
    await expect(page.getByTestId("field-creator")).toHaveText("You");
  } finally {
    await page.request.delete(`/api/v1/sandboxes/${mine.id}`, { headers: { origin: baseURL! } });
    await page.close();
  }
});
