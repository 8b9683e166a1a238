import { spawn } from "node:child_process";
import path from "node:path";
import type { APIResponse } from "@playwright/test";
import { seriousAxeViolations } from "./a11y";
import { expect, ROOT, test } from "./fixtures";
import { screenshot, watchForErrors } from "./helpers";

// The orkestr v1 contract through Baton (issue 23): the engine's own contract suites
// (`npm run contract`, engine/test/contract*.test.ts) run against Baton's /api with a Baton API token,
// as the orkestr SDK pointed at Baton would (ORKESTR_API_URL=<baton>/api, ORKESTR_API_KEY=bat_…).
// Then every sandbox they made shows its creator and how it was made: baton.user (the token's
// owner), baton.via=token and baton.token (the token's id).

interface Sandbox {
  id: string;
  created_at: string;
  metadata: Record<string, string>;
}

// Its own console instance: the suites' sandboxes are the only ones its team lists. Tagged
// @sdk-contract: `npm test` runs it as its own phase (scripts/test.mjs), so its time shows apart.
test.use({ consoleInstance: "sdk-contract" });

test("the engine's contract suites pass through Baton's /api with a Baton token, and stamp every sandbox @sdk-contract", async ({
  servers,
  ownerState,
  connected: page,
  playwright,
  baseURL,
}) => {
  // The suites take about a minute on 2 cores; the metrics and countdown tests wait on purpose.
  test.setTimeout(8 * 60_000);
  const owner = await playwright.request.newContext({ baseURL, storageState: ownerState });
  const made = await owner.post("/api/tokens", {
    headers: { origin: baseURL! },
    data: { name: "contract suites", scope: "write", expires_in_days: 7 },
  });
  expect(made.status(), await made.text()).toBe(201);
  const { token, api_token } = (await made.json()) as { token: string; api_token: { id: string } };
  const me = (await (await owner.get("/api/me")).json()) as { user: { id: string } };
  await owner.dispose();
  const started = new Date(Date.now() - 1000).toISOString();

  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, "scripts/check-contract.mjs"), "--reporter=dot"], {
      cwd: ROOT,
      env: { ...process.env, ORKESTR_API_URL: `${baseURL}/api`, ORKESTR_API_KEY: token },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.once("exit", (c) => resolve({ code: c, output: out }));
  });
  expect(code, `npm run contract through Baton:\n${output}\n${servers.log().slice(-4000)}`).toBe(0);
  expect(output).toMatch(/Tests\s.*\d+ passed/);

  // Every sandbox the suites made, in every state, read back through Baton with the same token.
  const api = await playwright.request.newContext({ baseURL, extraHTTPHeaders: { authorization: `Bearer ${token}` } });
  const seen: Sandbox[] = [];
  for (const status of ["running", "paused", "terminated", "expired"]) {
    let cursor: string | null = null;
    do {
      const r: APIResponse = await api.get(
        `/api/v1/sandboxes?status=${status}&limit=100${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(r.status(), await r.text()).toBe(200);
      seen.push(...((await r.json()) as Sandbox[]).filter((s) => s.created_at >= started));
      cursor = r.headers()["x-next-cursor"] ?? null;
    } while (cursor);
  }
  expect(seen.length).toBeGreaterThan(20);
  for (const s of seen) {
    expect({ id: s.id, stamp: s.metadata }).toEqual({
      id: s.id,
      stamp: expect.objectContaining({ "baton.user": me.user.id, "baton.via": "token", "baton.token": api_token.id }),
    });
  }

  // The console says how it was made: "via API token <name>", in the list and on the detail page.
  const mine = await api.post("/api/v1/sandboxes", { data: { template: "python-3.12" } });
  expect(mine.status(), await mine.text()).toBe(201);
  const { id } = (await mine.json()) as { id: string };

  // e2e/no-token-leak.spec.ts for the token path: no answer a token's client gets holds an engine
  // or orkestr token, or the engine's address (presigned links and PTY paths are Baton's).
  const ANY_TOKEN = /(?<![A-Za-z0-9_-])(ork|sp_live)_[A-Za-z0-9_-]{16,}/;
  const engineHost = new URL(servers.engine.origin).host;
  const answers = [
    await api.get(`/api/v1/sandboxes/${id}`),
    await api.get("/api/v1/sandboxes"),
    await api.get("/api/v1/limits"),
    await api.get(`/api/v1/sandboxes/${id}/events`),
    await api.post(`/api/v1/sandboxes/${id}/files/presign-download`, { data: { path: "/workspace/x" } }),
    await api.post(`/api/v1/sandboxes/${id}/files/presign-upload`, { data: { path: "/workspace/x" } }),
    await api.post(`/api/v1/sandboxes/${id}/pty`, { data: {} }),
    await api.get("/api/v1/templates"),
    await api.get("/api/v1/volumes"),
    await api.get("/api/v1/webhooks"),
    await api.get("/api/v1/usage"),
  ];
  for (const r of answers) {
    const text = `${JSON.stringify(r.headers())}\n${await r.text()}`;
    expect(r.status(), `${r.url()}: ${text}`).toBeLessThan(300);
    expect(text, r.url()).not.toMatch(ANY_TOKEN);
    expect(text, r.url()).not.toContain(engineHost);
  }
  await api.dispose();

  // Presigned file URLs as the SDK's README has them: "plain HTTP, no auth header ... hand to a
  // browser, curl, or another service". A token of its own, revoked at the end: its links die with it.
  const console_ = await playwright.request.newContext({ baseURL, storageState: ownerState });
  const linkMade = await console_.post("/api/tokens", {
    headers: { origin: baseURL! },
    data: { name: "file links", scope: "write", expires_in_days: 7 },
  });
  expect(linkMade.status(), await linkMade.text()).toBe(201);
  const linkToken = (await linkMade.json()) as { token: string; api_token: { id: string } };
  const sdk = await playwright.request.newContext({
    baseURL,
    extraHTTPHeaders: { authorization: `Bearer ${linkToken.token}` },
  });
  // No cookie, no Authorization: what curl or another service sends.
  const bare = await playwright.request.newContext();
  const presign = async (kind: "download" | "upload", data: object) => {
    const r = await sdk.post(`/api/v1/sandboxes/${id}/files/presign-${kind}`, { data });
    expect(r.status(), await r.text()).toBe(200);
    return (await r.json()) as { url: string; method: string; expires_at: string };
  };
  const up = await presign("upload", { path: "/workspace/linked.txt", max_bytes: 64, expires_in_seconds: 86_400 });
  expect(up.method).toBe("PUT");
  expect(new URL(up.url).origin).toBe(new URL(baseURL!).origin);
  expect(up.url).toMatch(/[?&]sig=[0-9a-f]{64}$/);
  expect(up.url).not.toContain(engineHost);
  // Capped at an hour, and the answer says so.
  expect(Date.parse(up.expires_at)).toBeLessThanOrEqual(Date.now() + 3600_000 + 5_000);
  const put = await bare.put(up.url, { data: Buffer.from("through a signed link\n") });
  expect(put.status(), await put.text()).toBe(201);
  const tooBig = await bare.put(up.url, { data: Buffer.alloc(65, 120) });
  expect(tooBig.status()).toBe(413);
  expect(await tooBig.json()).toMatchObject({ code: "payload_too_large" });
  const down = await presign("download", { path: "/workspace/linked.txt" });
  expect(down.method).toBe("GET");
  const got = await bare.get(down.url);
  expect(got.status(), await got.text()).toBe(200);
  expect(await got.text()).toBe("through a signed link\n");
  // Changed, it is refused; a download link never uploads.
  const changed = new URL(down.url);
  changed.searchParams.set("path", "/workspace/other.txt");
  expect((await bare.get(changed.toString())).status()).toBe(403);
  expect(await (await bare.put(down.url, { data: "x" })).json()).toMatchObject({ code: "invalid_signature" });
  // Revoked, every link the token made stops at once.
  const revoked = await console_.delete(`/api/tokens/${linkToken.api_token.id}`, { headers: { origin: baseURL! } });
  expect(revoked.status(), await revoked.text()).toBe(200);
  const after = await bare.get(down.url);
  expect(after.status()).toBe(403);
  expect(await after.json()).toMatchObject({ code: "link_revoked" });
  await Promise.all([console_.dispose(), sdk.dispose(), bare.dispose()]);

  const problems = watchForErrors(page);
  await page.goto("/sandboxes");
  const row = page.getByRole("table", { name: "Sandboxes" }).locator(`[role=row][data-sandbox-id="${id}"]`);
  await expect(row.getByTestId("created-by")).toHaveText("You via API token contract suites");
  await screenshot(page, "sandboxes-created-via-token");
  await page.goto(`/sandboxes/${id}`);
  await expect(page.getByTestId("field-creator")).toContainText("via API token contract suites");
  expect(await seriousAxeViolations(page), "axe on the detail page").toEqual([]);
  await page.request.delete(`/api/v1/sandboxes/${id}`, { headers: { origin: baseURL! } });
  expect(problems).toEqual([]);
});
