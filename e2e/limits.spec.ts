import type { Locator, Page } from "@playwright/test";
import { clearFaults, injectFault } from "../engine/test/helpers/engine";
import { seriousAxeViolations } from "./a11y";
import { expect, OWNER, test, type Servers } from "./fixtures";
import { screenshot, watchForErrors } from "./helpers";

// The Limits page against the real engine: every figure it shows equals what GET /v1/limits
// answers for the same account (read through the engine handle, which acts in the owner's team
// account), a create moves the RAM used without a reload, and a failing read is retried visibly.
// Its own console instance: the sandboxes it creates must not move another spec's numbers.
test.use({ consoleInstance: "limits" });
test.describe.configure({ mode: "serial" });

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the engine's JSON, read loosely
type Json = any;

async function apiLimits(servers: Servers): Promise<Json> {
  const r = await servers.engine.api("GET", "/limits");
  expect(r.status, r.text).toBe(200);
  return r.body;
}

/** "3 of 5" → [3, 5]: plain figures as numbers. */
function numbers(text: string): number[] {
  return [...text.replace(/,/g, "").matchAll(/-?\d+(\.\d+)?/g)].map((m) => Number(m[0]));
}

/** MiB per binary unit: every size on the page reads in these (never MB or GB). */
const MIB_PER: Record<string, number> = { B: 1 / 1024 ** 2, KiB: 1 / 1024, MiB: 1, GiB: 1024, TiB: 1024 ** 2 };

/** "1.5 GiB of 32 GiB" → [1536, 32768]: sizes as MiB, the engine's unit; a size in another unit is not read. */
function mebibytes(text: string): number[] {
  return [...text.replace(/,/g, "").matchAll(/(-?\d+(?:\.\d+)?) (B|KiB|MiB|GiB|TiB)\b/g)].map(
    (m) => Number(m[1]) * MIB_PER[m[2]!]!,
  );
}

/** How a gauge's figures read: counts exactly, sizes in binary units, euros in €. */
type Figures = "count" | "mib" | "eur";

/**
 * Whether `shown` is `real` as the page rounds it: counts exactly; sizes to one decimal of their
 * unit (whole from 100 on) and euros below 1 € to two significant digits, both within 5 %; euros
 * from 1 € on to the cent. So a real amount never reads as zero.
 */
function closeEnough(shown: number | undefined, real: number, kind: Figures): boolean {
  if (shown === undefined) return false;
  if (kind === "count") return shown === real;
  const tolerance = kind === "eur" && Math.abs(real) >= 1 ? 0.005 + 1e-9 : Math.abs(real) * 0.05;
  return Math.abs(shown - real) <= tolerance;
}

const meter = (page: Page, id: string): Locator => page.getByTestId(`gauge-${id}`).getByRole("meter");

/** The gauge's meter carries the API's exact used and cap, and its text shows the same figures. */
async function expectGauge(page: Page, id: string, used: number, cap: number, kind: Figures = "count") {
  const gauge = page.getByTestId(`gauge-${id}`);
  await expect(meter(page, id)).toHaveAttribute("aria-valuemax", String(cap));
  await expect(meter(page, id)).toHaveAttribute("aria-valuenow", String(Math.min(used, cap)));
  await expect(meter(page, id)).toHaveAttribute("data-used", String(used));
  const text = (await gauge.getByTestId("gauge-figures").textContent()) ?? "";
  const [shownUsed, shownCap] = kind === "mib" ? mebibytes(text) : numbers(text);
  expect.soft(closeEnough(shownUsed, used, kind), `${id} used: "${text}" for ${used}`).toBe(true);
  expect.soft(closeEnough(shownCap, cap, kind), `${id} cap: "${text}" for ${cap}`).toBe(true);
}

async function checkA11yLightAndDark(page: Page, name: string) {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expect(page.locator("html")).toHaveClass(scheme === "dark" ? /dark/ : /^(?!.*dark)/);
    expect(await seriousAxeViolations(page), `axe on ${name} (${scheme})`).toEqual([]);
    await screenshot(page, `${name}-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: "light" });
}

test("every figure on the page is the API's, and a create moves the RAM used live", async ({
  connected: page,
  servers,
}) => {
  test.setTimeout(180_000);
  const problems = watchForErrors(page);
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto("/limits");
  await expect(page.getByRole("heading", { level: 1, name: "Limits" })).toBeVisible();
  await expect(page.getByTestId("gauge-ram")).toBeVisible();
  // Nothing runs in this account yet, so nothing moves while the two are compared.
  const l = await apiLimits(servers);
  expect(l.running).toBe(0);

  // The plan.
  await expect(page.getByTestId("plan-name")).toHaveText(l.plan);
  // Whose figures these are, by the team's name: the engine's account name is Baton's internal id.
  await expect.soft(page.getByTestId("plan-team")).toHaveText(OWNER.teamName);
  await expect.soft(page.getByTestId("plan")).toContainText(`the ${OWNER.teamName} team's resources`);
  await expect.soft(page.getByTestId("plan")).not.toContainText(l.account.name);
  await expect(page.getByTestId("plan-max-concurrent")).toHaveText(String(l.max_concurrent));
  await expect(page.getByTestId("plan-network-open")).toHaveText(l.network_open_allowed ? "allowed" : "not allowed");
  await expect(page.getByTestId("plan-previews")).toHaveText(l.previews_allowed ? "allowed" : "not allowed");
  expect.soft(mebibytes((await page.getByTestId("plan-max-volume").textContent())!)).toEqual([l.max_volume_gb * 1024]);

  // Each used/cap pair.
  await expectGauge(page, "ram", l.ram_used_mb, l.ram_budget_mb, "mib");
  await expectGauge(page, "paused", l.paused, l.max_paused);
  await expectGauge(page, "snapshots", l.named_snapshots, l.max_named_snapshots);
  await expectGauge(page, "volumes", l.volumes, l.max_volumes);
  await expectGauge(page, "templates", l.templates, l.max_templates);
  await expectGauge(page, "credit", l.trial_credit_used_eur, l.trial_credit_eur, "eur");
  await expect(page.getByTestId("gauge-credit")).toContainText(
    l.trial_is_hard_limit ? "402 trial_exhausted" : "billed at the pay-as-you-go rates",
  );

  // Sizes: the menu, each figure, and the engine's own reason where it refuses one.
  const sizeRows = page.getByTestId("sizes-table").locator("tbody tr");
  await expect(sizeRows).toHaveCount(l.sizes.length);
  for (const s of l.sizes) {
    const row = page.getByTestId(`size-${s.size}`);
    await expect(row.getByTestId("size-cpu")).toHaveText(String(s.cpu));
    expect.soft(mebibytes((await row.getByTestId("size-memory").textContent())!)).toEqual([s.memory_mb]);
    await expect(row.getByTestId("size-status")).toHaveText(
      !s.allowed ? "Not on your plan" : s.fits_host === false ? "Too big for this machine" : "Available",
    );
    if (s.reason) await expect(row.getByTestId("size-reason")).toHaveText(s.reason);
  }

  // Regions and default egress domains, in the API's order.
  await expect(page.getByRole("list", { name: "Regions" }).getByRole("listitem")).toHaveText(l.regions);
  await expect(page.getByRole("list", { name: "Default egress domains" }).getByRole("listitem")).toHaveText(
    l.default_egress_domains,
  );

  // The local engine's host clamp and isolation report.
  const host = l.host_capacity;
  expect(host).not.toBeNull();
  await expect(meter(page, "host-ram")).toHaveAttribute("aria-valuemax", String(host.memory_for_sandboxes_mb));
  const hostMemory = mebibytes((await page.getByTestId("host-memory").textContent())!);
  expect.soft(closeEnough(hostMemory[0], host.memory_total_mb, "mib"), `RAM in total: ${hostMemory[0]}`).toBe(true);
  expect
    .soft(closeEnough(hostMemory[1], host.memory_reserved_mb, "mib"), `kept for the host: ${hostMemory[1]}`)
    .toBe(true);
  // Sizes in one kind of unit: binary, as the engine counts them (the engine's own sentences aside).
  for (const id of ["gauge-ram", "gauge-host-ram", "host-clamp", "sizes-table", "plan"]) {
    const text =
      id === "sizes-table"
        ? await page.getByTestId("size-memory").allInnerTexts()
        : [await page.getByTestId(id).innerText()];
    expect.soft(text.join(" "), `${id}: sizes in binary units`).not.toMatch(/\d\s?[KMGT]B\b/);
  }
  await expect(page.getByTestId("isolation-mode")).toHaveText(l.isolation.mode);
  await expect(page.getByTestId("isolation-seccomp")).toContainText(
    l.isolation.seccomp.enforced ? "Enforced" : "Not enforced",
  );
  const enforced = page.getByRole("list", { name: "Enforced" }).getByRole("listitem");
  // The /proc paths every sandbox gets read-only or masked, and who builds run as (issue 20).
  const proc = page.getByTestId("isolation-proc");
  for (const p of [...l.isolation.proc.read_only, ...l.isolation.proc.masked]) await expect(proc).toContainText(p);
  await expect(proc).toContainText("/proc/sys");
  await expect(proc).toContainText("/sys: not mounted");
  await expect(page.getByTestId("isolation-builds")).toContainText(
    l.isolation.builds ? `host uids ${l.isolation.builds.host_uids}, never 0` : "unavailable",
  );
  if (l.isolation.enforced.length) await expect(enforced).toHaveText(l.isolation.enforced);
  const degraded = page.getByRole("list", { name: "Degraded on this machine" }).getByRole("listitem");
  if (l.isolation.degraded.length) await expect(degraded).toHaveText(l.isolation.degraded);

  // Reading them in code: the connection's server, GET /v1/limits, no token.
  await page.getByRole("tab", { name: "curl" }).click();
  await expect(page.getByTestId("limits-code")).toContainText(`${servers.engine.origin}/v1/limits`);
  await expect(page.getByTestId("limits-code")).toContainText("$ORKESTR_API_KEY");

  await checkA11yLightAndDark(page, "limits");

  // A create moves the RAM used and the running count, on the page as it is (no reload).
  await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
  const created = await servers.engine.api<{ id: string; memory_mb: number }>("POST", "/sandboxes", {
    template: "python-3.12",
    size: "small",
  });
  expect(created.status, created.text).toBe(201);
  const after = await apiLimits(servers);
  expect(after.ram_used_mb).toBe(l.ram_used_mb + created.body.memory_mb);
  await expect(meter(page, "ram")).toHaveAttribute("aria-valuenow", String(after.ram_used_mb), { timeout: 20_000 });
  await expectGauge(page, "ram", after.ram_used_mb, after.ram_budget_mb, "mib");
  await expect(page.getByTestId("gauge-ram")).toContainText("1 running now");
  await screenshot(page, "limits-after-create-light");

  // A second or so of CPU draws a few hundred-thousandths of a euro from the trial credit.
  const burn = await servers.engine.api<{ exit_code: number }>("POST", `/sandboxes/${created.body.id}/exec`, {
    command: 'python3 -c "sum(range(30_000_000))"',
  });
  expect(burn.body.exit_code, burn.text).toBe(0);

  // And terminating it gives the memory back.
  const gone = await servers.engine.api("DELETE", `/sandboxes/${created.body.id}`);
  expect(gone.status).toBeLessThan(300);
  await expect(meter(page, "ram")).toHaveAttribute("aria-valuenow", String(l.ram_used_mb), { timeout: 20_000 });

  // That small amount reads as itself (two significant digits), not as €0.0000.
  await expect
    .poll(async () => (await apiLimits(servers)).trial_credit_used_eur, { timeout: 30_000 })
    .toBeGreaterThan(l.trial_credit_used_eur);
  const spent = await apiLimits(servers);
  await expect(meter(page, "credit")).toHaveAttribute("data-used", String(spent.trial_credit_used_eur), {
    timeout: 20_000,
  });
  await expectGauge(page, "credit", spent.trial_credit_used_eur, spent.trial_credit_eur, "eur");
  expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);

  // On a phone: one column, nothing wider than the screen (the sizes table scrolls in its own box).
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  expect(await seriousAxeViolations(page), "axe on limits (phone)").toEqual([]);
  await screenshot(page, "limits-mobile-light");
  expect(problems).toEqual([]);
});

test("a failing read is retried visibly, keeps the last figures and recovers by itself", async ({
  connected: page,
  servers,
}) => {
  test.setTimeout(120_000);
  await page.goto("/limits");
  await expect(page.getByTestId("gauge-ram").getByRole("meter")).toBeVisible();
  try {
    await injectFault(servers.engine, {
      kind: "error",
      status: 500,
      path: "^/v1/sandboxes/limits$",
      method: "GET",
      count: 2,
    });
    await page.getByRole("button", { name: "Refresh now" }).click();
    const notice = page.getByTestId("retry-notice");
    await expect(notice).toContainText("Your limits could not be read just now");
    await expect(notice).toContainText("The orkestr API had an internal error (500)");
    await expect(notice).toContainText("The figures below are from the last successful read");
    await expect(page.getByTestId("gauge-ram").getByRole("meter")).toBeVisible();
    await screenshot(page, "limits-retrying-light");
    await expect(notice).toBeHidden({ timeout: 30_000 });

    // A failure time does not fix (501: not retried) on a first load: the error, and a way to try
    // again. The header's connection check reads the same route, so the fault stays until cleared.
    await injectFault(servers.engine, {
      kind: "error",
      status: 501,
      path: "^/v1/sandboxes/limits$",
      method: "GET",
      count: 50,
    });
    await page.reload();
    const error = page.getByRole("alert").filter({ hasText: "Could not read your limits" });
    await expect(error).toBeVisible();
    await expect(error).toContainText("501");
    await expect(page.getByTestId("gauge-ram")).toHaveCount(0);
    await screenshot(page, "limits-error-light");
    await clearFaults(servers.engine);
    await error.getByRole("button", { name: "Try again" }).click();
    await expect(page.getByTestId("gauge-ram").getByRole("meter")).toBeVisible();
  } finally {
    await clearFaults(servers.engine);
  }
});
