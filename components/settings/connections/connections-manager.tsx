"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { connectionKeys, connectionMutations, connectionQueries } from "../../../lib/queries/connections";
import type { ConnectionListDto } from "../../../lib/validations/connections";
import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Button } from "../../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { Skeleton } from "../../ui/skeleton";
import { AddConnectionForm } from "./add-connection-form";
import { ConnectionItem } from "./connection-item";
import { errorText } from "../../../lib/orkestr/errors";
import { ReadOnlyNote } from "../../ui/read-only-note";
import { useRoleReason } from "../../layout/use-role-reason";

/** Settings → Connections, below the page header: the local engine shortcut, the list, the add form. */
export function ConnectionsManager({ initial, canManage }: { initial: ConnectionListDto; canManage: boolean }) {
  const queryClient = useQueryClient();
  const list = useQuery({ ...connectionQueries.list(), initialData: initial });
  const [localError, setLocalError] = useState<string | null>(null);
  const local = useMutation({
    mutationFn: connectionMutations.localEngine,
    onSuccess: async () => {
      setLocalError(null);
      await queryClient.invalidateQueries({ queryKey: connectionKeys.all });
    },
    onError: (error) => setLocalError(errorText(error)),
  });

  const data = list.data;
  const hasLocal = data.connections.some((c) => c.is_local_engine);
  // Why the local engine shortcut and the add form are not offered to this role.
  const readOnly = useRoleReason("connections.manage", "add or change orkestr connections");

  return (
    <div className="flex flex-col gap-6">
      {list.isError ? (
        <Alert variant="destructive">
          <AlertTitle>Could not load the connections</AlertTitle>
          <AlertDescription className="flex flex-wrap items-center gap-3 text-foreground">
            {errorText(list.error)}
            <Button size="sm" variant="outline" onClick={() => list.refetch()}>
              Retry
            </Button>
          </AlertDescription>
        </Alert>
      ) : null}

      {!canManage && readOnly ? <ReadOnlyNote block>{readOnly}</ReadOnlyNote> : null}

      {canManage ? (
        <Card>
          <CardHeader>
            <CardTitle>Local engine</CardTitle>
            <CardDescription>
              Baton&apos;s own orkestr-compatible engine on this machine ({data.local_engine.origin}). One click mints a
              token and connects it.
            </CardDescription>
          </CardHeader>
          <CardContent className="flex flex-col gap-3">
            {data.local_engine.available ? (
              <div>
                <Button onClick={() => local.mutate()} disabled={local.isPending}>
                  {local.isPending ? "Connecting…" : hasLocal ? "Reconnect the local engine" : "Use the local engine"}
                </Button>
              </div>
            ) : (
              <p className="text-sm text-muted-foreground" data-testid="local-engine-unavailable">
                Not available: {data.local_engine.reason ?? "the local engine is not running."}
              </p>
            )}
            {localError ? (
              <p role="alert" className="text-sm text-destructive">
                {localError}
              </p>
            ) : null}
          </CardContent>
        </Card>
      ) : null}

      <section aria-labelledby="connections-list-title" className="flex flex-col gap-3">
        <h2 id="connections-list-title" className="text-lg font-semibold">
          Your connections
        </h2>
        {list.isFetching && !list.isFetched ? (
          <div role="status" aria-label="Loading connections" className="flex flex-col gap-3">
            <Skeleton className="h-24 w-full" />
          </div>
        ) : data.connections.length === 0 ? (
          <div
            className="rounded-lg border border-dashed border-input px-6 py-10 text-center"
            data-testid="connections-empty"
          >
            <p className="font-medium">No connections yet</p>
            <p className="mt-1 text-sm text-muted-foreground">
              {canManage
                ? "Use the local engine above, or add an orkestr API with its token below. The console needs one to show sandboxes."
                : "The console needs one to show sandboxes."}
            </p>
          </div>
        ) : (
          <ul className="flex flex-col gap-3" aria-busy={list.isFetching}>
            {data.connections.map((c) => (
              <ConnectionItem key={c.id} connection={c} />
            ))}
          </ul>
        )}
      </section>

      {canManage ? (
        <Card>
          <CardHeader>
            <CardTitle>Add a connection</CardTitle>
            <CardDescription>
              Any orkestr v1 API: https://api.orkestr.eu or your own. Private and link-local addresses are refused.
            </CardDescription>
          </CardHeader>
          <CardContent>
            <AddConnectionForm />
          </CardContent>
        </Card>
      ) : (
        <p className="text-sm text-muted-foreground">Your role does not allow managing connections.</p>
      )}
    </div>
  );
}
