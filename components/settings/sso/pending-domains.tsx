"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { errorText } from "../../../lib/orkestr/errors";
import { ssoKeys, ssoMutations, ssoQueries } from "../../../lib/queries/sso";
import { Button } from "../../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { Skeleton } from "../../ui/skeleton";

/** For the instance owner: every team's claimed SSO domains, with Approve for the pending ones. */
export function PendingDomains() {
  const queryClient = useQueryClient();
  const domains = useQuery(ssoQueries.domains());
  const approve = useMutation({
    mutationFn: ssoMutations.approveDomain,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ssoKeys.all }),
  });
  const items = domains.data?.domains ?? [];
  return (
    <Card>
      <CardHeader>
        <CardTitle>SSO domains of every team</CardTitle>
        <CardDescription>
          As the instance owner, you approve which team&apos;s identity provider speaks for an email domain. Until then
          the domain is not enforced and existing accounts are not linked.
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-3">
        {domains.isPending ? (
          <Skeleton className="h-10 w-full" />
        ) : domains.isError ? (
          <p role="alert" className="text-sm text-destructive">
            {errorText(domains.error)}{" "}
            <Button size="sm" variant="outline" onClick={() => domains.refetch()}>
              Retry
            </Button>
          </p>
        ) : items.length === 0 ? (
          <p className="text-sm text-muted-foreground">No team has claimed a domain.</p>
        ) : (
          <ul className="flex flex-col divide-y" aria-label="Claimed domains">
            {items.map((d) => (
              <li key={d.domain} className="flex flex-wrap items-center justify-between gap-2 py-2">
                <span className="text-sm">
                  <span className="font-medium">{d.domain}</span>{" "}
                  <span className="text-muted-foreground">
                    claimed by {d.team ? `${d.team.name} (${d.team.slug})` : "a deleted team"}
                  </span>
                </span>
                {d.approved ? (
                  <span className="text-sm text-muted-foreground">Approved</span>
                ) : (
                  <Button size="sm" onClick={() => approve.mutate(d.domain)} disabled={approve.isPending}>
                    Approve<span className="sr-only"> {d.domain}</span>
                  </Button>
                )}
              </li>
            ))}
          </ul>
        )}
        {approve.isError ? (
          <p role="alert" className="text-sm text-destructive">
            {errorText(approve.error)}
          </p>
        ) : null}
      </CardContent>
    </Card>
  );
}
