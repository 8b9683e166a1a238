"use client";

import { useQuery } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { formatDateTime, formatMebibytes, formatUtc } from "../../lib/format";
import { asOrkestrError, errorText } from "../../lib/orkestr/errors";
import { sandboxQueries } from "../../lib/queries/sandboxes";
import { snapshotKeys, snapshotQueries } from "../../lib/queries/snapshots";
import { RetryNotice } from "../layout/lazy-notices";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { ReadOnlyNote } from "../ui/read-only-note";
import { useRoleReason } from "../layout/use-role-reason";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../ui/card";
import { CopyButton } from "../ui/copy-button";
import { Skeleton } from "../ui/skeleton";
import { cn } from "../../lib/utils";
import { CapMeter } from "./cap-meter";
import { DeleteSnapshotDialog } from "./delete-snapshot-dialog";
import { ForkForm } from "./fork-form";
import { ForkTree } from "./fork-tree";
import { MemoryCell } from "./memory-cell";
import { dateTimeAttr, memoryFact, snapshotCap } from "./snapshot-facts";
import { SourceSandbox } from "./source-sandbox";
import { TeamLink as Link, useTeamRouter } from "../layout/team-link";

function Fact({ term, children, className }: { term: string; children: ReactNode; className?: string }) {
  return (
    <div className={cn("flex flex-col gap-0.5", className)}>
      <dt className="text-xs text-muted-foreground">{term}</dt>
      <dd className="text-sm">{children}</dd>
    </div>
  );
}

/** /snapshots/{id}: what the snapshot holds, its fork tree (live), the fork form and Delete. */
export function SnapshotDetail({ id, canFork, canDelete }: { id: string; canFork: boolean; canDelete: boolean }) {
  // Why Fork… and Delete… are not offered (forking creates sandboxes: sandboxes.write).
  const noFork = useRoleReason("sandboxes.write", "fork snapshots into sandboxes");
  const noDelete = useRoleReason("snapshots.write", "delete snapshots");
  const router = useTeamRouter();
  const snapshot = useQuery(snapshotQueries.detail(id));
  const list = useQuery(snapshotQueries.list());
  const limits = useQuery(sandboxQueries.limits());
  const [deleting, setDeleting] = useState(false);
  const breadcrumb = (
    <nav aria-label="Breadcrumb" className="text-sm text-muted-foreground">
      <Link href="/snapshots" className="hover:text-foreground hover:underline">
        Snapshots
      </Link>
      <span aria-hidden="true"> / </span>
      <span>{snapshot.data?.name ?? id}</span>
    </nav>
  );

  if (snapshot.isPending)
    return (
      <div className="flex flex-col gap-4">
        {breadcrumb}
        <div role="status" aria-label="Loading the snapshot" className="flex flex-col gap-3">
          <Skeleton className="h-8 w-72" />
          <Skeleton className="h-32 w-full" />
          <Skeleton className="h-48 w-full" />
        </div>
        <RetryNotice query={snapshot} queryKey={snapshotKeys.detail(id)} title="The snapshot could not be read yet" />
      </div>
    );
  if (snapshot.isError) {
    const notFound = asOrkestrError(snapshot.error).status === 404;
    return (
      <div className="flex flex-col gap-4">
        {breadcrumb}
        <h1 className="text-2xl font-semibold tracking-tight">{id}</h1>
        <Alert variant={notFound ? "warning" : "destructive"}>
          <AlertTitle>{notFound ? "No such snapshot" : "The snapshot could not be read"}</AlertTitle>
          <AlertDescription className="flex flex-wrap items-center gap-3 text-foreground">
            {notFound
              ? "It was deleted, or it belongs to another account. Sandboxes forked from it keep running."
              : errorText(snapshot.error)}
            {notFound ? (
              <Button size="sm" variant="outline" asChild>
                <Link href="/snapshots">All snapshots</Link>
              </Button>
            ) : (
              <Button size="sm" variant="outline" onClick={() => snapshot.refetch()}>
                Retry
              </Button>
            )}
          </AlertDescription>
        </Alert>
      </div>
    );
  }

  const snap = snapshot.data;
  const fact = memoryFact(snap, limits.data);
  const cap = snapshotCap(limits.data, list.data);
  return (
    <div className="flex flex-col gap-6">
      <div className="flex flex-col gap-3">
        {breadcrumb}
        <div className="flex flex-col gap-3 lg:flex-row lg:items-start lg:justify-between">
          <div className="flex min-w-0 flex-col gap-1.5">
            <div className="flex flex-wrap items-center gap-2">
              <h1 className="truncate text-xl font-semibold tracking-tight sm:text-2xl">{snap.name ?? snap.id}</h1>
              {snap.status ? (
                <Badge
                  variant={snap.status === "ready" ? "success" : snap.status === "failed" ? "destructive" : "pending"}
                >
                  {snap.status}
                </Badge>
              ) : null}
            </div>
            <p className="flex items-center gap-2 font-mono text-xs text-muted-foreground">
              {snap.id}
              <CopyButton text={snap.id} label="Copy id" copiedLabel="Copied" />
            </p>
          </div>
          <div className="flex flex-wrap items-center gap-4">
            <CapMeter cap={cap} />
            {canFork ? (
              <Button variant="outline" size="sm" asChild>
                <a href="#fork">Fork…</a>
              </Button>
            ) : null}
            {canDelete ? (
              <Button variant="destructive" size="sm" onClick={() => setDeleting(true)}>
                Delete…
              </Button>
            ) : noDelete ? (
              <ReadOnlyNote className="max-w-xs">{noDelete}</ReadOnlyNote>
            ) : null}
          </div>
        </div>
      </div>

      <Card>
        <CardContent className="pt-6">
          <dl className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
            <Fact term="Source sandbox">
              <SourceSandbox id={snap.sandbox_id} />
            </Fact>
            <Fact term="Template">{snap.template ?? "—"}</Fact>
            <Fact term="Region">{snap.region ?? "—"}</Fact>
            <Fact term="Size on disk">{formatMebibytes(snap.size_mb)}</Fact>
            <Fact term="Created">
              <time dateTime={dateTimeAttr(snap.created_at)} title={formatUtc(snap.created_at)}>
                {formatDateTime(snap.created_at)}
              </time>
            </Fact>
            <Fact term="Forks boot as">{snap.sandbox_size ?? "—"}</Fact>
            <Fact term="Source frozen for">{typeof snap.frozen_ms === "number" ? `${snap.frozen_ms} ms` : "—"}</Fact>
            <Fact term="Captured">{snap.captured_paths?.length ? snap.captured_paths.join(", ") : "—"}</Fact>
            <Fact term="Memory captured" className="sm:col-span-2 lg:col-span-4">
              <MemoryCell fact={fact} long />
            </Fact>
          </dl>
        </CardContent>
      </Card>

      <Card>
        <CardHeader>
          <CardTitle>Fork tree</CardTitle>
          <CardDescription>
            The sandboxes born from this snapshot, with their live status (ended ones greyed).
          </CardDescription>
        </CardHeader>
        <CardContent>
          <ForkTree snapshot={snap} allSnapshots={list.data ?? []} />
        </CardContent>
      </Card>

      {canFork ? (
        <Card id="fork" className="scroll-mt-20">
          <CardHeader>
            <CardTitle>Fork</CardTitle>
            <CardDescription>
              New sandboxes that start from this snapshot&apos;s files, then diverge. The options that apply to a fork,
              as on the create page.
            </CardDescription>
          </CardHeader>
          <CardContent>
            {snap.status && snap.status !== "ready" ? (
              <p className="text-sm text-muted-foreground">
                Forks can start once the snapshot is ready ({snap.status}).
              </p>
            ) : limits.isPending ? (
              <Skeleton className="h-64 w-full" />
            ) : (
              <ForkForm snapshot={snap} limits={limits.data ?? null} />
            )}
          </CardContent>
        </Card>
      ) : (
        <ReadOnlyNote>{noFork}</ReadOnlyNote>
      )}

      {deleting ? (
        <DeleteSnapshotDialog
          snapshot={snap}
          open
          onOpenChange={(open) => {
            if (!open) setDeleting(false);
          }}
          onDeleted={() => router.push("/snapshots")}
        />
      ) : null}
    </div>
  );
}
