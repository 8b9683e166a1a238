"use client";

import { TeamLink as Link } from "../../layout/team-link";
import { sandboxHref } from "../../../lib/links";
import { EmptyState } from "../../layout/empty-state";
import { ReadOnlyNote } from "../../ui/read-only-note";
import { useSandboxAccess } from "../detail/use-sandbox-access";
import { TerminalLoader } from "./terminal-loader";

/**
 * The Terminal tab for the user's role: a shell runs commands, so it needs sandboxes.write. A role
 * without it gets the reason instead of a terminal (and xterm is never downloaded); the PTY and exec
 * routes refuse it with 403 all the same.
 */
export function TerminalGate({ sandboxId, forceLine }: { sandboxId: string; forceLine: boolean }) {
  const { canChange, whyNot } = useSandboxAccess();
  if (canChange) return <TerminalLoader sandboxId={sandboxId} forceLine={forceLine} />;
  return (
    <EmptyState
      title="No terminal for your role"
      description={
        <div className="flex flex-col items-center gap-3">
          <ReadOnlyNote>{whyNot("open a terminal")}</ReadOnlyNote>
          <p>
            You can still read its{" "}
            <Link href={sandboxHref(sandboxId, "files")} className="text-primary underline underline-offset-4">
              files
            </Link>{" "}
            and follow what runs in it on{" "}
            <Link href={sandboxHref(sandboxId, "activity")} className="text-primary underline underline-offset-4">
              Activity
            </Link>
            .
          </p>
        </div>
      }
    />
  );
}
