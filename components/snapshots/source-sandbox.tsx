"use client";

import { useQuery } from "@tanstack/react-query";
import { sandboxHref } from "../../lib/links";
import { asOrkestrError } from "../../lib/orkestr/errors";
import { sandboxQueries } from "../../lib/queries/sandboxes";
import { isFinished } from "../../lib/sandbox-status";
import { StatusBadge } from "../sandboxes/status-badge";
import { TeamLink as Link } from "../layout/team-link";

/**
 * The sandbox a snapshot was taken of: a link to its page with its status while the server knows
 * it, "terminated" (without a link) once it is gone. Shares its cache with the sandbox's own page.
 */
export function SourceSandbox({ id, stacked = false }: { id: string | null | undefined; stacked?: boolean }) {
  const query = useQuery({ ...sandboxQueries.detail(id ?? ""), enabled: !!id, staleTime: 30_000 });
  if (!id) return <span className="text-muted-foreground">—</span>;
  const gone = query.isError && asOrkestrError(query.error).status === 404;
  if (gone)
    return (
      <span className="flex flex-col leading-tight">
        <span className="text-muted-foreground">terminated</span>
        <span className="font-mono text-xs text-muted-foreground" title="No longer known to the server">
          {id}
        </span>
      </span>
    );
  const status = query.data?.status;
  return (
    <span className={stacked ? "flex flex-col items-start gap-1" : "flex flex-wrap items-center gap-1.5"}>
      <Link href={sandboxHref(id)} className="font-mono text-xs underline-offset-4 hover:underline">
        {id}
      </Link>
      {status ? (
        <StatusBadge status={status} className={isFinished(status) ? "opacity-80" : undefined} />
      ) : query.isError ? (
        <span className="text-xs text-muted-foreground">(status unknown)</span>
      ) : null}
    </span>
  );
}
