import { execFileSync } from "node:child_process";
import path from "node:path";
import { expect, ROOT, test } from "./fixtures.js";

// Two Baton teams on one local engine, through the pages: each team's members connect with
// "Use the local engine" and get tokens of their own team's engine account, so neither team's
// console lists, opens or drives the other's sandboxes.
test.use({ consoleInstance: "tenancy" });

const OTHER = { email: "grace@example.com", password: "another correct horse battery", team: "Compilers" };

test("two teams see only their own sandboxes, in the list and on every sandbox page", async ({ connected: page, servers, browser, baseURL }) => {
  test.setTimeout(120_000);
  // The owner's team (A): a sandbox through the engine, in the account the owner's console uses.
  const a = await servers.engine.api<{ id: string }>("POST", "/sandboxes", { template: "python-3.12", metadata: { team: "a" } });
  expect(a.status, a.text).toBe(201);

  // The other team (B): its owner is written into the console's database, signs in, connects.
  execFileSync(process.execPath, ["--conditions=react-server", "--import", "tsx", path.join(ROOT, "e2e/seed/add-team-user.ts"), OTHER.email, OTHER.password, OTHER.team], {
    cwd: ROOT,
    env: servers.env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const other = await browser.newContext({ baseURL });
  const otherPage = await other.newPage();
  const login = await other.request.post("/api/auth/login", { data: { email: OTHER.email, password: OTHER.password }, headers: { origin: baseURL! } });
  expect(login.status()).toBe(200);
  const connect = await other.request.post("/api/connections/local-engine", { headers: { origin: baseURL! } });
  expect(connect.status(), await connect.text()).toBe(201);
  const b = await other.request.post("/api/v1/sandboxes", { data: { template: "python-3.12", metadata: { team: "b" } }, headers: { origin: baseURL! } });
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
    expect((await p.request.post(`/api/v1/sandboxes/${foreign}/exec`, { data: { command: "true" }, headers: { origin: baseURL! } })).status()).toBe(404);
  }
  // Both sandboxes still run: nothing of one team was touched by the other.
  expect((await servers.engine.api<{ status: string }>("GET", `/sandboxes/${aId}`)).body.status).toBe("running");
  const bNow = await otherPage.request.get(`/api/v1/sandboxes/${bId}`);
  expect(((await bNow.json()) as { status: string }).status).toBe("running");
  await other.close();
});
