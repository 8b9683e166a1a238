import { freePort } from "../engine/test/helpers/free-port";
import { startTestIdp, type TestIdp } from "../tests/helpers/oidc-idp";
import { seriousAxeViolations } from "./a11y";
import { expect, test } from "./fixtures";
import { screenshot } from "./helpers";

// SSO end to end: the owner configures the team's OpenID provider (a real oidc-provider on
// loopback, started here), runs a test sign-in through the IdP's own login form, enforces SSO, and a
// new person signs in through the IdP and lands in the team with just-in-time membership.

// The console must know the IdP's origin when it starts (BATON_SSO_ALLOWED_ISSUERS: a loopback
// issuer is a private one), so the port is chosen before the worker's servers start, and this spec
// has a console of its own.
const IDP_PORT = await freePort();
process.env.BATON_SSO_ALLOWED_ISSUERS = `http://127.0.0.1:${IDP_PORT}`;
test.use({ consoleInstance: "sso" });

const DOMAIN = "sso-e2e.test";
let idp: TestIdp;

test.beforeAll(async ({ servers }) => {
  idp = await startTestIdp({
    port: IDP_PORT,
    clients: [
      {
        client_id: "baton-e2e",
        client_secret: "e2e-client-secret",
        redirect_uris: [`${servers.baseURL}/api/auth/sso/callback`],
      },
    ],
    users: {
      grace: { email: `grace@${DOMAIN}`, email_verified: true, name: "Grace Hopper", groups: ["baton-devs"] },
    },
  });
});
test.afterAll(async () => {
  await idp?.close();
});

async function signInAtIdpForm(page: import("@playwright/test").Page, login: string) {
  await page.waitForURL((u) => u.href.startsWith(idp.issuer));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.locator('button[type="submit"]').click();
}

test("an owner sets up SSO, tests it, enforces it, and a new person signs in through the IdP with JIT membership", async ({
  signedIn: page,
  browser,
  servers,
}) => {
  test.setTimeout(120_000);
  await page.goto("/settings/sso");
  await expect(page.getByRole("heading", { name: "Single sign-on" })).toBeVisible();
  await expect(page.getByTestId("sso-redirect-uri")).toHaveText(`${servers.baseURL}/api/auth/sso/callback`);
  await page.getByLabel("Issuer URL").fill(idp.issuer);
  await page.getByLabel("Client ID").fill("baton-e2e");
  await page.getByLabel(/Client secret/).fill("e2e-client-secret");
  await page.getByLabel("Email domains").fill(DOMAIN);
  await page.getByRole("button", { name: "Add a group mapping" }).click();
  await page.getByLabel("Group 1", { exact: true }).fill("baton-devs");
  await page.getByLabel("Role for group 1").selectOption("member");
  await expect(page.getByTestId("sso-enforce")).toBeDisabled();
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("sso-saved")).toHaveText("Saved.");
  await expect(page.getByTestId("sso-secret-state")).toHaveText("(set)");
  await expect(page.getByText(`${DOMAIN}: waiting for the instance owner`)).toBeVisible();

  // The owner set Baton up, so they are the instance owner: they approve the domain here.
  await page.getByRole("button", { name: `Approve ${DOMAIN}` }).click();
  await expect(page.getByText("Approved", { exact: true })).toBeVisible();

  // Test sign-in through the IdP's login form; back on /settings/sso with the result.
  await page.getByRole("button", { name: "Test sign-in" }).click();
  await signInAtIdpForm(page, "grace");
  await page.waitForURL(/\/settings\/sso\?test=done/);
  await expect(page.getByTestId("sso-test-result")).toContainText(`grace@${DOMAIN}`);
  await expect(page.getByTestId("sso-test-result")).toContainText("member");
  await expect(page.getByText(`${DOMAIN}: approved`)).toBeVisible();

  // Enforce, now that a test went through.
  await expect(page.getByTestId("sso-enforce")).toBeEnabled();
  await page.getByTestId("sso-enforce").check();
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("sso-saved")).toHaveText("Saved.");

  // axe, light and dark, at 1280 and 390 px.
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expect(page.locator("html")).toHaveClass(scheme === "dark" ? /dark/ : /^(?!.*dark)/);
      expect(await seriousAxeViolations(page), `axe on /settings/sso (${scheme}, ${width} px)`).toEqual([]);
      await screenshot(page, `settings-sso-${scheme}-${width}`);
    }
  }

  // A new person, in a fresh browser: "Sign in with SSO" on the login page, the IdP's form, the team.
  const context = await browser.newContext({ baseURL: servers.baseURL });
  const guest = await context.newPage();
  await guest.goto("/login");
  const t0 = Date.now();
  await guest.getByLabel("Work email or team").fill(`grace@${DOMAIN}`);
  await guest.getByRole("button", { name: "Sign in with SSO" }).click();
  const tIdp = Date.now();
  await signInAtIdpForm(guest, "grace");
  const tForm = Date.now();
  await guest.waitForURL(/\/sandboxes/);
  const t1 = Date.now();
  console.log(
    `[sso e2e] browser sign-in: ${t1 - t0} ms from the click to /sandboxes (to the IdP form ${tIdp - t0} ms; after the IdP form ${t1 - tForm} ms)`,
  );
  const me = await guest.request.get("/api/me");
  expect(me.status()).toBe(200);
  const body = JSON.stringify(await me.json());
  expect(body).toContain(`grace@${DOMAIN}`);
  expect(body).toContain('"member"');
  await screenshot(guest, "sso-signed-in");

  // Enforced: the password form refuses a domain address, naming SSO.
  const other = await browser.newContext({ baseURL: servers.baseURL });
  const login = await other.request.post("/api/auth/login", {
    data: { email: `grace@${DOMAIN}`, password: "whatever password" },
    headers: { origin: servers.baseURL },
  });
  expect(login.status()).toBe(403);
  expect(await login.json()).toMatchObject({ code: "sso_required" });
  await other.close();
  await context.close();

  // The owner finds the SSO sign-in and the configuration change in the audit log, by query.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto("/audit");
  for (const action of ["sso.sign_in", "sso.config_update"]) {
    await page.getByLabel("Query", { exact: true }).fill(`action:${action}`);
    await page.getByRole("button", { name: "Search" }).click();
    const row = page.locator(`[data-testid=audit-table] tbody tr[data-action="${action}"]`).first();
    await expect(row).toBeVisible();
    if (action === "sso.sign_in") await expect(row).toContainText(`grace@${DOMAIN}`);
  }
});
