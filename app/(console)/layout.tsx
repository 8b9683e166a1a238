import type { ReactNode } from "react";
import { CommandLauncher } from "../../components/command-palette/command-launcher";
import { Header } from "../../components/layout/header";
import { OutageWatch } from "../../components/layout/outage-watch";
import { Sidebar, SidebarBrand, SidebarNav } from "../../components/layout/sidebar";
import { pageTeamChoice, requireTeam, requireUser } from "../../lib/server/auth";
import { DATABASE_RETRY_SECONDS, isDatabaseUnavailable } from "../../lib/server/db/unavailable";
import { DatabaseOutage } from "../../components/layout/database-outage";
import { connectionStatus } from "../../lib/server/connections";
import { ReceivedEventsBridge } from "../../components/events/received-events-bridge";
import { PermissionsProvider } from "../../components/layout/permissions";
import { clientPermissions } from "../../lib/server/client-permissions";
import { getMigratedDb } from "../../lib/server/db/index";
import { capMeterFor } from "../../lib/server/usage/cap-meter";
import { SpendAlertBanner, SpendCapBanner, SpendMeter } from "../../components/layout/spend-meter";

/** The header's first render must not wait on a slow upstream for long: the poll catches up. */
const INITIAL_CHECK_TIMEOUT_MS = 2_500;

/**
 * The console shell: skip link, sidebar (a drawer below md), header, and the page in <main>.
 * It checks the session itself (proxy.ts never does): no live session → /login, no user yet → /setup.
 * Pages and API routes that read data check again (the layout is not re-run on client navigations).
 */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  let shell;
  try {
    const current = await requireUser();
    const { user } = current;
    // The URL says which team (`?team=<slug>`): without one, the same URL with the default team;
    // a team the user is not a member of is "not found" (lib/server/auth.ts requireTeam).
    const team = await requireTeam(current);
    // The connection the pages use (the acting team's) and a live check of it, server-side (the
    // token never leaves the server).
    const connection = await connectionStatus(team, { checkTimeoutMs: INITIAL_CHECK_TIMEOUT_MS });
    const teams = current.memberships.map(({ team: t, membership }) => ({
      name: t.name,
      slug: t.slug,
      role: membership.role,
    }));
    // The role's permissions reach the browser once, here: controls a role may not use are not
    // offered (components/layout/permissions.tsx); the API refuses them with 403 all the same.
    // They are the role in the URL's team.
    // The caller's closest spend cap once past 50 % (the caps job's last figure): a header meter,
    // and a banner at every width (amber past an alert threshold, red when reached).
    const meter = await capMeterFor(await getMigratedDb(), team);
    shell = {
      user,
      meter,
      connection,
      teams,
      activeSlug: team?.team.slug ?? null,
      permissions: clientPermissions(user.id, team),
    };
  } catch (err) {
    // The database restarting is said as such, with a page that retries in place (not a generic
    // error page); anything else (redirects to /login included) goes on as thrown.
    // A URL without `?team=` is answered with a redirect once the database is back, which only a
    // new page load follows; one with a team recovers in place.
    if (isDatabaseUnavailable(err))
      return <DatabaseOutage retryAfterSeconds={DATABASE_RETRY_SECONDS} reload={!(await pageTeamChoice()).slug} />;
    throw err;
  }
  const { user, meter, connection, teams, activeSlug, permissions } = shell;
  // Rendered here, once, for the sidebar and the mobile drawer: the nav is server-rendered (only its
  // links' current-section marking is client code), with the entries the role may open.
  const brand = <SidebarBrand />;
  const nav = <SidebarNav permissions={permissions.permissions} />;
  return (
    <PermissionsProvider value={permissions}>
      <div className="flex min-h-dvh">
        <a
          href="#main"
          className="sr-only focus:not-sr-only focus:fixed focus:top-2 focus:left-2 focus:z-50 focus:rounded-md focus:bg-primary focus:px-3 focus:py-2 focus:text-sm focus:font-medium focus:text-primary-foreground"
        >
          Skip to content
        </a>
        <Sidebar brand={brand} nav={nav} />
        <div className="flex min-w-0 flex-1 flex-col">
          <Header
            connection={connection}
            user={{ name: user.name, email: user.email }}
            teams={teams}
            activeSlug={activeSlug}
            brand={brand}
            nav={nav}
            meter={meter ? <SpendMeter meter={meter} /> : null}
          />
          {meter ? <SpendAlertBanner meter={meter} /> : null}
          {meter ? <SpendCapBanner meter={meter} /> : null}
          {/* Says when reads keep failing (orkestr API, Baton server or database down), and clears itself. */}
          <OutageWatch />
          <main
            id="main"
            tabIndex={-1}
            className="mx-auto w-full max-w-6xl flex-1 px-4 py-6 outline-none md:px-8 md:py-8"
          >
            {children}
          </main>
        </div>
        {/* Received webhook events update the sandbox pages as they arrive (loaded when idle). */}
        <ReceivedEventsBridge />
        {/* Ctrl/Cmd-K and `?` anywhere in the console. */}
        <CommandLauncher teams={teams} activeSlug={activeSlug} />
      </div>
    </PermissionsProvider>
  );
}
