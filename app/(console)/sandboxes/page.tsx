import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { PageHeader } from "../../../components/layout/page-header";
import { SandboxList } from "../../../components/sandboxes/list/sandbox-list";
import { Button } from "../../../components/ui/button";
import { Skeleton } from "../../../components/ui/skeleton";
import { navItem } from "../../../lib/config/nav";

export const metadata: Metadata = { title: "Sandboxes" };

/** The sandbox list; its data is live (client-side through /api/v1), its state is in the URL. */
export default function SandboxesPage() {
  const item = navItem("/sandboxes");
  return (
    <>
      <PageHeader
        title={item.title}
        description={item.description}
        actions={
          <Button asChild>
            <Link href="/sandboxes/new">Create sandbox</Link>
          </Button>
        }
      />
      {/* useSearchParams() reads the URL on the client; the fallback shows until it has. */}
      <Suspense fallback={<Skeleton className="h-96 w-full" />}>
        <SandboxList />
      </Suspense>
    </>
  );
}
