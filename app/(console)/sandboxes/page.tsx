import type { Metadata } from "next";
import { NoConnection } from "../../../components/layout/no-connection";
import { Suspense } from "react";
import { PageHeader } from "../../../components/layout/page-header";
import { SandboxList } from "../../../components/sandboxes/list/sandbox-list";
import { Button } from "../../../components/ui/button";
import { Skeleton } from "../../../components/ui/skeleton";
import { navItem } from "../../../lib/config/page-intro";
import { Forbidden } from "../../../components/layout/forbidden";
import { requirePermission } from "../../../lib/server/auth";
import { getMigratedDb } from "../../../lib/server/db";
import { listTeamMembers } from "../../../lib/server/db/teams";
import { teamTokenNames } from "../../../lib/server/creator-via-names";
import { sandboxCostRates } from "../../../lib/server/usage/rates";
import { UsageRatesProvider } from "../../../components/usage/rates-context";
import type { ActingTeam } from "../../../lib/server/acting-team";
import { ReadOnlyNote } from "../../../components/ui/read-only-note";
import { reasonFor } from "../../../lib/server/client-permissions";
import { TeamLink as Link } from "../../../components/layout/team-link";

export const metadata: Metadata = { title: "Sandboxes" };

/**
 * The sandbox list; its data is live (client-side through /api/v1), its state is in the URL.
 * Without a connection there is nothing to list: the page says so and where to add one, rather
 * than letting the list's queries fail one after another.
 */
export default async function SandboxesPage() {
  const item = navItem("/sandboxes");
  // The permission GET /api/v1/sandboxes requires.
  const access = await requirePermission("sandboxes.read");
  if (!access.ok) return <Forbidden title={item.title} detail={access.detail} />;
  const connection = access.team.connection;
  // The "Created · by" column and the `?creator=` chip name the team's members from this map: one
  // query here, none per row (no one outside the team is named).
  const members = connection ? await memberNames(access.team) : {};
  // "via API token <name>" for sandboxes made with a token: the team's tokens, revoked ones too.
  const tokens = connection ? await teamTokenNames(await getMigratedDb(), access.team.team.id) : {};
  // "Cost so far" per row at the team's rate card, as /usage prices it (null: the role may not read usage).
  const rates = connection ? await sandboxCostRates(await getMigratedDb(), access.team) : null;
  // Create sandbox needs sandboxes.write: a role without it is told why instead.
  const readOnly = reasonFor(access.team, "sandboxes.write", "create sandboxes");
  return (
    <>
      <PageHeader
        title={item.title}
        description={item.description}
        actions={
          !connection ? null : readOnly ? (
            <ReadOnlyNote className="max-w-xs">{readOnly}</ReadOnlyNote>
          ) : (
            <Button asChild>
              <Link href="/sandboxes/new">Create sandbox</Link>
            </Button>
          )
        }
      />
      {connection ? (
        // useSearchParams() reads the URL on the client; the fallback shows until it has.
        <Suspense fallback={<Skeleton className="h-96 w-full" />}>
          <UsageRatesProvider rates={rates}>
            <SandboxList members={members} tokens={tokens} />
          </UsageRatesProvider>
        </Suspense>
      ) : (
        <NoConnection>
          Your sandboxes are listed through an orkestr connection: the hosted API with your token, any v1 server, or the
          local engine that ships with Baton.
        </NoConnection>
      )}
    </>
  );
}

/** The acting team's members, user id → name (the email when no name is set). */
async function memberNames(team: ActingTeam): Promise<Record<string, string>> {
  const db = await getMigratedDb();
  const out: Record<string, string> = {};
  for (const { user } of await listTeamMembers(db, team.team.id)) out[user.id] = user.name || user.email;
  return out;
}
