import { EmptyState } from "../../../components/layout/empty-state";
import { Button } from "../../../components/ui/button";
import { TeamLink as Link } from "../../../components/layout/team-link";

// An unknown sandbox id (the upstream's 404 from /sandboxes/[id]'s layout), inside the console shell.
export default function SandboxNotFound() {
  return (
    <>
      <h1 className="pb-6 text-2xl font-semibold tracking-tight">Sandbox not found</h1>
      <EmptyState
        title="There is no sandbox with this id"
        description="It may have been terminated long enough ago to leave the history, belong to another connection, or the link may be mistyped."
        action={
          <div className="flex flex-wrap justify-center gap-2">
            <Button asChild>
              <Link href="/sandboxes">All sandboxes</Link>
            </Button>
            <Button asChild variant="outline">
              <Link href="/sandboxes/new">Create a sandbox</Link>
            </Button>
          </div>
        }
      />
    </>
  );
}
