import type { Metadata } from "next";
import { notFound } from "next/navigation";
import type { ReactNode } from "react";
import { SandboxProvider } from "../../../../components/sandboxes/detail/sandbox-context";
import { CreatedViaProvider } from "../../../../components/sandboxes/detail/created-via";
import { creatorViaOf, creatorViaText } from "../../../../lib/sandbox-creator";
import { teamTokenName } from "../../../../lib/server/creator-via-names";
import { getMigratedDb } from "../../../../lib/server/db";
import { sandboxCostRates } from "../../../../lib/server/usage/rates";
import { UsageRatesProvider } from "../../../../components/usage/rates-context";
import { SandboxHeader } from "../../../../components/sandboxes/detail/sandbox-header";
import { SandboxTabs } from "../../../../components/sandboxes/detail/sandbox-tabs";
import { Alert, AlertDescription, AlertTitle } from "../../../../components/ui/alert";
import { LazyAutoRefresh } from "../../../../components/layout/lazy-auto-refresh";
import { OrkestrError } from "../../../../lib/orkestr/errors";
import type { Sandbox } from "../../../../lib/orkestr/schemas/sandboxes";
import { Forbidden } from "../../../../components/layout/forbidden";
import { requirePermission } from "../../../../lib/server/auth";
import { describeError } from "../../../../lib/server/errors";
import type { ActingTeam } from "../../../../lib/server/acting-team";
import { withUpstream } from "../../../../lib/server/upstream";
import { sandboxHref } from "../../../../lib/links";
import { TeamLink as Link } from "../../../../components/layout/team-link";

type Params = Promise<{ id: string }>;

/** The id as typed in the URL; a malformed escape is kept as is (the upstream then says 404). */
function decodeId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { id } = await params;
  return { title: decodeId(id) };
}

/** The sandbox, or why it could not be read; an id the upstream does not know is a 404 page. */
async function loadSandbox(
  team: ActingTeam,
  id: string,
): Promise<
  { sandbox: Sandbox } | { problem: { code: string; detail: string; status: number; retryAfterSeconds: number | null } }
> {
  try {
    return { sandbox: await withUpstream(team, (orkestr) => orkestr.sandboxes.get(id)) };
  } catch (err) {
    if (err instanceof OrkestrError && (err.status === 404 || err.code === "sandbox_not_found"))
      return { problem: { code: "not_found", detail: err.detail, status: 404, retryAfterSeconds: null } };
    const { body, status, retryAfterSeconds } = describeError(err, "sandbox detail");
    return { problem: { code: body.code, detail: body.detail, status, retryAfterSeconds } };
  }
}

// The detail frame shared by Overview, Terminal, Files, Previews and Activity: the sandbox is read
// here, server-side, with the user's own connection of the acting team, the one the API uses
// (another user's sandbox is the upstream's 404),
// and handed to the client leaves, which keep it live.
export default async function SandboxLayout({ children, params }: { children: ReactNode; params: Params }) {
  const { id: rawId } = await params;
  const id = decodeId(rawId);
  // The permission GET /api/v1/sandboxes/{id} requires: without it, nothing is read.
  const access = await requirePermission("sandboxes.read");
  if (!access.ok) return <Forbidden title={id} detail={access.detail} />;
  const result = await loadSandbox(access.team, id);
  if ("problem" in result) {
    if (result.problem.code === "not_found") notFound();
    const connectionProblem = [
      "no_connection",
      "connection_token_rejected",
      "token_unreadable",
      "invalid_url",
    ].includes(result.problem.code);
    const temporary = result.problem.status >= 500 && result.problem.status !== 501;
    return (
      <div className="flex flex-col gap-4">
        <h1 className="font-mono text-xl font-semibold">{id}</h1>
        <Alert variant="destructive">
          <AlertTitle>This sandbox could not be loaded</AlertTitle>
          <AlertDescription className="flex flex-col gap-2 text-foreground">
            <p>{result.problem.detail}</p>
            <p>
              {temporary ? (
                // The orkestr API (or the database) is down or restarting: ask again on a countdown.
                <LazyAutoRefresh retryAfterSeconds={result.problem.retryAfterSeconds} />
              ) : connectionProblem ? (
                <Link href="/settings/connections" className="font-medium underline underline-offset-4">
                  Open Settings → Connections
                </Link>
              ) : (
                <Link href={sandboxHref(id)} className="font-medium underline underline-offset-4">
                  Try again
                </Link>
              )}
            </p>
          </AlertDescription>
        </Alert>
      </div>
    );
  }
  // "Created by … via API token <name>": the token's name from this team's tokens (revoked ones too).
  const made = creatorViaOf(result.sandbox.metadata);
  const via = made
    ? creatorViaText(made, await teamTokenName(await getMigratedDb(), access.team.team.id, made.tokenId))
    : null;
  // "Cost so far" (Overview) at the team's rate card, as /usage prices it; read on each request, so
  // a changed card shows on the next visit.
  const rates = await sandboxCostRates(await getMigratedDb(), access.team);
  return (
    <SandboxProvider initial={result.sandbox}>
      <CreatedViaProvider via={via}>
        <UsageRatesProvider rates={rates}>
          {/* The buttons a role may use come from the console layout's permissions (use-sandbox-access.ts). */}
          <SandboxHeader />
          <SandboxTabs id={result.sandbox.id} />
          {children}
        </UsageRatesProvider>
      </CreatedViaProvider>
    </SandboxProvider>
  );
}
