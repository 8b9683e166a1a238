import { seriousAxeViolations } from "./a11y";
import { expect, OWNER, test } from "./fixtures";
import { addMember, addTeamUser, runSeed, screenshot, signedInContext } from "./helpers";

// @db: teams, memberships and roles are rows of the console database, and scope every query.
// Two Baton teams on one local engine, through the pages: each team's members connect with
// "Use the local engine" and get tokens of their own team's engine account, so neither team's
// console lists, opens or drives the other's sandboxes.
test.use({ consoleInstance: "tenancy" });

const OTHER = { email: "grace@example.com", password: "another correct horse battery", team: "Compilers" };
const TEAMLESS = { email: "nobody@example.com", password: "a third correct horse battery" };
const VIEWER = { email: "viewer@example.com", password: "a fourth correct horse battery" };

test("two teams see only their own sandboxes, in the list and on every sandbox page @db", async ({
  connected: page,
  servers,
  browser,
  baseURL,
}) => {
  test.setTimeout(120_000);
  // The owner's team (A): a sandbox through the engine, in the account the owner's console uses.
  const a = await servers.engine.api<{ id: string }>("POST", "/sandboxes", {
    template: "python-3.12",
    metadata: { team: "a" },
  });
  expect(a.status, a.text).toBe(201);

  // The other team (B): its owner is written into the console's database, signs in, connects.
  addTeamUser(servers, OTHER, OTHER.team);
  const other = await signedInContext(browser, baseURL!, OTHER);
  const otherPage = await other.newPage();
  const connect = await other.request.post("/api/connections/local-engine", { headers: { origin: baseURL! } });
  expect(connect.status(), await connect.text()).toBe(201);
  const b = await other.request.post("/api/v1/sandboxes", {
    data: { template: "python-3.12", metadata: { team: "b" } },
    headers: { origin: baseURL! },
  });
  expect(b.status()).toBe(201);
  const bId = ((await b.json()) as { id: string }).id;
  const aId = a.body.id;

  // Each list shows its own team's sandbox and not the other's.
  await page.goto("/sandboxes");
  await expect(page.getByRole("link", { name: aId })).toBeVisible();
  await expect(page.getByRole("link", { name: bId })).toHaveCount(0);
  await otherPage.goto("/sandboxes");
  await expect(otherPage.getByRole("link", { name: bId })).toBeVisible();
  await expect(otherPage.getByRole("link", { name: aId })).toHaveCount(0);

  // Each team's sandbox pages are "not found" to the other team, whichever tab is asked for.
  for (const [p, foreign] of [
    [page, bId],
    [otherPage, aId],
  ] as const) {
    for (const tab of ["", "/terminal", "/files", "/previews", "/activity"]) {
      await p.goto(`/sandboxes/${foreign}${tab}`);
      await expect(p.getByRole("heading", { level: 1, name: "Sandbox not found" })).toBeVisible();
    }
    // And the API behind them answers 404 too, for reads and writes.
    expect((await p.request.get(`/api/v1/sandboxes/${foreign}`)).status()).toBe(404);
    expect(
      (
        await p.request.post(`/api/v1/sandboxes/${foreign}/exec`, {
          data: { command: "true" },
          headers: { origin: baseURL! },
        })
      ).status(),
    ).toBe(404);
  }
  // Both sandboxes still run: nothing of one team was touched by the other.
  expect((await servers.engine.api<{ status: string }>("GET", `/sandboxes/${aId}`)).body.status).toBe("running");
  const bNow = await otherPage.request.get(`/api/v1/sandboxes/${bId}`);
  expect(((await bNow.json()) as { status: string }).status).toBe("running");
  await other.close();
});

test("a user whose role cannot read sandboxes is told so on the sandbox pages, and shown none @db", async ({
  connected: page,
  servers,
  browser,
  baseURL,
}) => {
  // A sandbox of the owner's team, which this user must not see any of.
  const a = await servers.engine.api<{ id: string }>("POST", "/sandboxes", {
    template: "python-3.12",
    metadata: { team: "a" },
  });
  expect(a.status, a.text).toBe(201);
  void page;
  addTeamUser(servers, TEAMLESS);
  const context = await signedInContext(browser, baseURL!, TEAMLESS);
  const p = await context.newPage();
  // In the page's main landmark: while the page streams in after loading.tsx, React's hidden copy
  // of the late segment sits outside it for a moment.
  const forbidden = p.getByRole("main").getByTestId("forbidden");
  for (const scheme of ["light", "dark"] as const) {
    await p.emulateMedia({ colorScheme: scheme });
    await p.goto("/sandboxes");
    await expect(forbidden).toContainText("You do not have access to this page");
    await expect(p.getByRole("link", { name: a.body.id })).toHaveCount(0);
    await screenshot(p, `forbidden-${scheme}`);
    expect(await seriousAxeViolations(p)).toEqual([]);
  }
  // The page names the id it was asked for, and nothing it would have read (status, template, tabs).
  await p.goto(`/sandboxes/${a.body.id}`);
  await expect(forbidden).toBeVisible();
  await expect(p.getByTestId("sandbox-status")).toHaveCount(0);
  await expect(p.getByRole("navigation", { name: "Sandbox sections" })).toHaveCount(0);
  expect((await p.request.get("/api/v1/sandboxes")).status()).toBe(403);
  await context.close();
});

test("a viewer sees the team's sandbox and snapshot, offered nothing the role may not do @db", async ({
  connected: page,
  servers,
  browser,
  baseURL,
}) => {
  void page;
  const sbx = await servers.engine.api<{ id: string }>("POST", "/sandboxes", { template: "python-3.12" });
  expect(sbx.status, sbx.text).toBe(201);
  const snap = await servers.engine.api<{ id: string }>("POST", `/sandboxes/${sbx.body.id}/snapshots`, {
    name: `viewer-${Date.now()}`,
  });
  expect(snap.status, snap.text).toBe(201);
  addMember(servers, VIEWER, "viewer");
  const context = await signedInContext(browser, baseURL!, VIEWER);
  const p = await context.newPage();
  try {
    await p.goto(`/sandboxes/${sbx.body.id}`);
    await expect(p.getByTestId("sandbox-status")).toHaveText(/running/i);
    await expect(
      p.getByRole("note").filter({ hasText: "Viewers can't pause, resume or terminate sandboxes" }),
    ).toContainText("ask an admin for the member role");
    for (const name of ["Pause", "Keep alive…", "Snapshot…", "Terminate…"])
      await expect(p.getByRole("button", { name, exact: true })).toHaveCount(0);

    // A viewer's list names creators too: this one was made on the engine, outside Baton.
    await p.goto("/sandboxes");
    await expect(p.locator(`[role=row][data-sandbox-id="${sbx.body.id}"]`).getByTestId("created-by")).toHaveText(
      "outside Baton",
    );

    await p.goto("/snapshots");
    await expect(p.getByRole("link", { name: snap.body.id }).or(p.getByText(snap.body.id))).not.toHaveCount(0);
    await expect(p.getByRole("link", { name: /^Fork / })).toHaveCount(0);
    await expect(p.getByRole("button", { name: /^Delete / })).toHaveCount(0);

    await p.goto(`/snapshots/${snap.body.id}`);
    await expect(p.getByRole("note").filter({ hasText: "Viewers can't fork snapshots" })).toBeVisible();
    await expect(p.getByRole("button", { name: "Delete…" })).toHaveCount(0);
    await expect(p.getByRole("link", { name: "Fork…" })).toHaveCount(0);
    await screenshot(p, "viewer-snapshot-light");
    // What the page no longer offers, the API refuses as before.
    const fork = await p.request.post("/api/v1/sandboxes", {
      data: { snapshot: snap.body.id },
      headers: { origin: baseURL! },
    });
    expect(fork.status()).toBe(403);
  } finally {
    await context.close();
    await servers.engine.api("DELETE", `/sandboxes/${sbx.body.id}`);
  }
});

const TWO_TEAMS = { email: "two-teams@example.com", password: "a fifth correct horse battery", team: "Own Team" };
const MEMBER = { email: "member@example.com", password: "a sixth correct horse battery" };

test("a viewer of the owner's team who owns a team of their own is a viewer on the owner's sandboxes @db", async ({
  connected: page,
  servers,
  browser,
  baseURL,
}) => {
  void page;
  const sbx = await servers.engine.api<{ id: string }>("POST", "/sandboxes", { template: "python-3.12" });
  expect(sbx.status, sbx.text).toBe(201);
  // Their own team first (their oldest membership, where they are owner), then the owner's, as a
  // viewer, connected to its engine account: the team whose data they reach is the owner's.
  addTeamUser(servers, TWO_TEAMS, TWO_TEAMS.team);
  runSeed(servers, "join-team.ts", [TWO_TEAMS.email, OWNER.email, "viewer"]);
  const context = await signedInContext(browser, baseURL!, TWO_TEAMS);
  const p = await context.newPage();
  try {
    await p.goto(`/sandboxes/${sbx.body.id}`);
    await expect(p.getByTestId("sandbox-status")).toHaveText(/running/i);
    await expect(p.getByTestId("read-only").first()).toBeVisible();
    for (const [path, data] of [
      ["exec", { command: "env" }],
      ["pty", {}],
    ] as const) {
      const res = await p.request.post(`/api/v1/sandboxes/${sbx.body.id}/${path}`, {
        data,
        headers: { origin: baseURL! },
      });
      expect(res.status(), path).toBe(403);
      expect(((await res.json()) as { detail: string }).detail).toContain(`${OWNER.teamName} (viewer)`);
    }
  } finally {
    await context.close();
    await servers.engine.api("DELETE", `/sandboxes/${sbx.body.id}`);
  }
});

test("an open terminal stops taking input and says why within 5 s of a sign-out everywhere @db", async ({
  connected: page,
  servers,
  browser,
  baseURL,
}) => {
  test.setTimeout(120_000);
  void page;
  addMember(servers, MEMBER, "member");
  const context = await signedInContext(browser, baseURL!, MEMBER);
  const elsewhere = await signedInContext(browser, baseURL!, MEMBER);
  const sbx = await servers.engine.api<{ id: string }>("POST", "/sandboxes", { template: "python-3.12" });
  expect(sbx.status, sbx.text).toBe(201);
  const id = sbx.body.id;
  const p = await context.newPage();
  try {
    await p.goto(`/sandboxes/${id}/terminal`);
    await p.getByRole("button", { name: /^(Open|New) terminal$/ }).click();
    const terminal = p.locator('[role="tabpanel"]:not([hidden]) [data-testid="terminal"]');
    await expect(terminal).toHaveAttribute("data-status", "ready", { timeout: 20_000 });
    await terminal.click();
    await p.keyboard.type("touch /tmp/before-sign-out");
    await p.keyboard.press("Enter");
    const exists = async (file: string) =>
      (
        await servers.engine.api<{ stdout: string }>("POST", `/sandboxes/${id}/exec`, {
          command: `test -e ${file} && echo yes || echo no`,
        })
      ).body.stdout.trim();
    await expect.poll(() => exists("/tmp/before-sign-out")).toBe("yes");

    // Signed out everywhere from another browser: this terminal's session is one of them.
    const out = await elsewhere.request.post("/api/auth/logout-everywhere", { headers: { origin: baseURL! } });
    expect(out.status()).toBe(200);
    const t0 = Date.now();
    await expect(p.getByTestId("terminal-status")).toHaveText(
      "Your session was signed out or has expired. Sign in again.",
      { timeout: 5_000 },
    );
    expect(Date.now() - t0).toBeLessThanOrEqual(5_000);
    await expect(terminal).toHaveAttribute("data-status", "failed");
    // What is typed now goes nowhere.
    await terminal.click();
    await p.keyboard.type("touch /tmp/after-sign-out");
    await p.keyboard.press("Enter");
    await p.waitForTimeout(1_000);
    expect(await exists("/tmp/after-sign-out")).toBe("no");
    await screenshot(p, "terminal-signed-out");
  } finally {
    await context.close();
    await elsewhere.close();
    await servers.engine.api("DELETE", `/sandboxes/${id}`);
  }
});
