import type { Metadata } from "next";
import { NoConnection } from "../../../components/layout/no-connection";
import Link from "next/link";
import { Suspense } from "react";
import { PageHeader } from "../../../components/layout/page-header";
import { SandboxList } from "../../../components/sandboxes/list/sandbox-list";
import { Button } from "../../../components/ui/button";
import { Skeleton } from "../../../components/ui/skeleton";
import { navItem } from "../../../lib/config/page-intro";
import { Forbidden } from "../../../components/layout/forbidden";
import { requirePermission } from "../../../lib/server/auth";

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
  return (
    <>
      <PageHeader
        title={item.title}
        description={item.description}
        actions={
          connection ? (
            <Button asChild>
              <Link href="/sandboxes/new">Create sandbox</Link>
            </Button>
          ) : null
        }
      />
      {connection ? (
        // useSearchParams() reads the URL on the client; the fallback shows until it has.
        <Suspense fallback={<Skeleton className="h-96 w-full" />}>
          <SandboxList />
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
