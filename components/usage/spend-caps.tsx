"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { useState } from "react";
import { formatMicro, formatPercent, formatUtc } from "../../lib/format";
import { errorText } from "../../lib/orkestr/errors";
import { capsKeys, capsMutations, capsQueries } from "../../lib/queries/caps";
import { CAP_ACTION_TEXT, barWidth, capStatus, capSubject, sortCaps, type CapStatus } from "../../lib/usage/caps-form";
import type { CapView, CapsView } from "../../lib/usage/caps-view";
import { cn } from "../../lib/utils";
import { EmptyState } from "../layout/empty-state";
import { QueryError } from "../layout/query-error";
import { useRoleReason } from "../layout/use-role-reason";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../ui/card";
import { Dialog, DialogActions } from "../ui/dialog";
import { ReadOnlyNote } from "../ui/read-only-note";
import { Skeleton } from "../ui/skeleton";
import { TableScroll } from "../ui/table";
import type { Tone } from "../ui/tone";

// The form and the alert settings are for billing managers only: loaded when they are shown.
const CapFormDialog = dynamic(() => import("./cap-form-dialog"), { ssr: false });
const AlertSettingsCard = dynamic(() => import("./alert-settings"), {
  ssr: false,
  loading: () => <Skeleton className="h-40 w-full" />,
});

const STATUS_TONE: Record<CapStatus["kind"], Tone> = {
  unread: "neutral",
  under: "success",
  alerted: "warning",
  reached: "destructive",
};

const BAR_CLASS: Record<CapStatus["kind"], string> = {
  unread: "bg-muted-foreground",
  under: "bg-success",
  alerted: "bg-warning",
  reached: "bg-destructive",
};

function windowText(cap: CapView): string {
  return `${cap.window === "month" ? "Month" : "Day"} (UTC)`;
}

/**
 * The spend caps on /usage (issue 22): every cap for admins and owners, the team's and one's own for
 * members and viewers, each with how close it is, what it does when reached, and what could still
 * be spent before the job next applies it. Billing managers set, change and remove caps and choose
 * where alerts go; everyone else is told why they cannot.
 */
export function SpendCaps() {
  const caps = useQuery(capsQueries.list());
  return (
    <section
      id="spend-caps"
      aria-labelledby="spend-caps-title"
      className="flex scroll-mt-20 flex-col gap-3"
      data-testid="spend-caps"
    >
      <h2 id="spend-caps-title" className="text-lg font-semibold">
        Spend caps
      </h2>
      {caps.isPending ? (
        <div className="flex flex-col gap-3" aria-busy="true" data-testid="spend-caps-loading">
          <p className="sr-only" role="status">
            Loading spend caps…
          </p>
          <Skeleton className="h-6 w-2/3" />
          <Skeleton className="h-40 w-full" />
        </div>
      ) : caps.isError && !caps.data ? (
        <QueryError
          title="The spend caps could not be read"
          error={caps.error}
          fallback="Baton could not read this team's spend caps."
          onRetry={() => void caps.refetch()}
        />
      ) : (
        <CapsBody view={caps.data} />
      )}
    </section>
  );
}

type Editing = { cap: CapView | null } | null;

function CapsBody({ view }: { view: CapsView }) {
  const reason = useRoleReason("billing.manage", "set spend caps");
  const [editing, setEditing] = useState<Editing>(null);
  const [removing, setRemoving] = useState<CapView | null>(null);
  const caps = sortCaps(view.caps);
  const notManager = view.can_manage ? null : (reason ?? `Only ${view.raisers} can set spend caps.`);
  const setButton = view.can_manage ? (
    <Button onClick={() => setEditing({ cap: null })} data-testid="spend-caps-set">
      Set a cap
    </Button>
  ) : null;

  return (
    <>
      <p className="text-sm text-muted-foreground" data-testid="spend-caps-next-run">
        {view.scope === "team"
          ? "Every cap of the team: the team's and each member's."
          : "The team's cap and your own."}{" "}
        Baton applies the caps each time it reads usage; the next run is{" "}
        <time dateTime={view.next_run_at}>{formatUtc(view.next_run_at)}</time>. A cap change takes effect then (one set
        below what is already spent blocks at once).
      </p>

      {caps.length === 0 ? (
        <EmptyState
          className="min-h-48"
          icon={
            <svg viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true">
              <path d="M12 3v18M5 8h14M5 16h14" strokeLinecap="round" />
            </svg>
          }
          title="No spend caps yet"
          description={
            <>
              A cap limits what the team, or one member, spends in a UTC month or day. Alerts go out at 50, 80 and 100
              %; at 100 % it only alerts, blocks new work or pauses the running sandboxes, as chosen.
            </>
          }
          action={setButton ?? (notManager ? <ReadOnlyNote>{notManager}</ReadOnlyNote> : null)}
        />
      ) : (
        <Card>
          <CardHeader className="flex flex-row flex-wrap items-start justify-between gap-3">
            <div className="flex flex-col gap-1.5">
              <CardTitle>Caps</CardTitle>
              <CardDescription>
                Spent so far is what the job read at its last run in the current window. Possible overshoot: what the
                running sandboxes in the cap&apos;s scope could spend before the next run sees it reached.
              </CardDescription>
            </div>
            {setButton}
          </CardHeader>
          <CardContent className="flex flex-col gap-3">
            <CapsTable
              caps={caps}
              self={view.scope === "self"}
              canManage={view.can_manage}
              onEdit={(cap) => setEditing({ cap })}
              onRemove={setRemoving}
            />
            {notManager ? <ReadOnlyNote>{notManager}</ReadOnlyNote> : null}
          </CardContent>
        </Card>
      )}

      <CannotStopNote />

      {view.can_manage ? <AlertSettingsCard /> : null}

      {editing ? <CapFormDialog cap={editing.cap} caps={view.caps} onClose={() => setEditing(null)} /> : null}
      <RemoveCapDialog cap={removing} onClose={() => setRemoving(null)} />
    </>
  );
}

function CapsTable({
  caps,
  self,
  canManage,
  onEdit,
  onRemove,
}: {
  caps: CapView[];
  /** Only the team's cap and the caller's own: a member's cap is "You". */
  self: boolean;
  canManage: boolean;
  onEdit: (cap: CapView) => void;
  onRemove: (cap: CapView) => void;
}) {
  return (
    <TableScroll tabIndex={0} role="region" aria-label="Spend caps table">
      <table className="w-full min-w-[52rem] text-sm" data-testid="spend-caps-table">
        <thead>
          <tr className="border-b text-left text-xs text-muted-foreground">
            <th scope="col" className="min-w-40 py-2 pr-4 font-medium">
              For
            </th>
            <th scope="col" className="min-w-44 py-2 pr-4 font-medium">
              Window
            </th>
            <th scope="col" className="min-w-48 py-2 pr-4 font-medium">
              Spent / limit
            </th>
            <th scope="col" className="py-2 pr-4 font-medium">
              Status
            </th>
            <th scope="col" className="py-2 pr-4 font-medium">
              When reached
            </th>
            <th scope="col" className="py-2 pr-4 font-medium">
              Possible overshoot
            </th>
            {canManage ? (
              <th scope="col" className="py-2 font-medium">
                <span className="sr-only">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {caps.map((cap) => (
            <CapRow key={cap.id} cap={cap} self={self} canManage={canManage} onEdit={onEdit} onRemove={onRemove} />
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function CapRow({
  cap,
  self,
  canManage,
  onEdit,
  onRemove,
}: {
  cap: CapView;
  self: boolean;
  canManage: boolean;
  onEdit: (cap: CapView) => void;
  onRemove: (cap: CapView) => void;
}) {
  const status = capStatus(cap);
  const subject = self && cap.user_id ? "You" : capSubject(cap);
  const spent = cap.spent_micro === null ? "Not read yet" : formatMicro(cap.spent_micro);
  return (
    <tr
      className="border-b align-top last:border-0"
      data-testid="spend-cap-row"
      data-cap-id={cap.id}
      data-user-id={cap.user_id ?? ""}
      data-window={cap.window}
    >
      <th scope="row" className="py-3 pr-4 text-left font-medium">
        {subject}
        {cap.user && (self || cap.user.name) ? (
          <span className="block text-xs font-normal text-muted-foreground">{cap.user.email}</span>
        ) : null}
      </th>
      <td className="py-3 pr-4">
        {windowText(cap)}
        <span className="block text-xs text-muted-foreground">
          Resets <time dateTime={cap.resets_at}>{formatUtc(cap.resets_at)}</time>
        </span>
      </td>
      <td className="py-3 pr-4">
        <span
          className="tabular-nums"
          data-testid="spend-cap-figures"
          data-spent={cap.spent_micro ?? ""}
          data-limit={cap.limit_micro}
        >
          {spent} of {formatMicro(cap.limit_micro)}
          {cap.percent !== null ? ` (${formatPercent(Number.isFinite(cap.percent) ? cap.percent : 100, 0)})` : ""}
        </span>
        <div className="mt-1.5 h-2 w-full overflow-hidden rounded-full bg-muted" aria-hidden="true">
          <div
            className={cn("h-full rounded-full", BAR_CLASS[status.kind])}
            style={{ width: `${barWidth(cap.percent)}%` }}
          />
        </div>
      </td>
      <td className="py-3 pr-4">
        <Badge variant={STATUS_TONE[status.kind]} data-testid="spend-cap-status">
          {status.label}
        </Badge>
      </td>
      <td className="py-3 pr-4">
        <span className="font-medium">{CAP_ACTION_TEXT[cap.action].label}</span>
        <span className="block max-w-64 text-xs text-muted-foreground">{CAP_ACTION_TEXT[cap.action].explain}</span>
      </td>
      <td
        className="py-3 pr-4 tabular-nums"
        data-testid="spend-cap-overshoot"
        data-micro={cap.possible_overshoot_micro}
      >
        {cap.possible_overshoot_micro > 0 ? `up to ${formatMicro(cap.possible_overshoot_micro)}` : "None"}
        <span className="block text-xs text-muted-foreground">
          {cap.run_rate_micro_per_hour > 0
            ? `at ${formatMicro(cap.run_rate_micro_per_hour)}/h`
            : "nothing running in its scope"}
        </span>
      </td>
      {canManage ? (
        <td className="py-3">
          <div className="flex gap-2">
            <Button
              size="sm"
              variant="outline"
              onClick={() => onEdit(cap)}
              aria-label={`Edit the cap of ${subject} per ${cap.window}`}
            >
              Edit
            </Button>
            <Button
              size="sm"
              variant="ghost"
              onClick={() => onRemove(cap)}
              aria-label={`Remove the cap of ${subject} per ${cap.window}`}
            >
              Remove
            </Button>
          </div>
        </td>
      ) : null}
    </tr>
  );
}

function RemoveCapDialog({ cap, onClose }: { cap: CapView | null; onClose: () => void }) {
  const client = useQueryClient();
  const [pending, setPending] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const remove = async () => {
    if (!cap) return;
    setPending(true);
    setFailure(null);
    try {
      client.setQueryData(capsKeys.list(), await capsMutations.remove(cap.id));
      void client.invalidateQueries({ queryKey: capsKeys.all });
      onClose();
    } catch (err) {
      setFailure(errorText(err, "The cap could not be removed."));
    } finally {
      setPending(false);
    }
  };
  return (
    <Dialog
      open={cap !== null}
      onOpenChange={(open) => {
        if (!open) {
          setFailure(null);
          onClose();
        }
      }}
      title="Remove this spend cap?"
      description={
        cap
          ? `${capSubject(cap)}'s ${cap.window === "month" ? "monthly" : "daily"} cap of ${formatMicro(cap.limit_micro)} goes at once: nothing is blocked or paused by it from then on. Alerts already sent stay in the audit log.`
          : undefined
      }
    >
      {failure ? (
        <p role="alert" className="text-sm text-destructive">
          {failure}
        </p>
      ) : null}
      <DialogActions cancelDisabled={pending}>
        <Button variant="destructive" disabled={pending} onClick={() => void remove()}>
          {pending ? "Removing…" : "Remove cap"}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

/** What Baton cannot stop (README "Usage, cost and spend caps"). */
function CannotStopNote() {
  return (
    <aside className="rounded-lg border border-dashed px-4 py-3 text-sm" aria-labelledby="caps-cannot-stop">
      <h3 id="caps-cannot-stop" className="font-medium">
        What Baton cannot stop
      </h3>
      <p className="mt-1 text-muted-foreground">
        A sandbox created with a raw orkestr or engine token, outside Baton, is not refused by Baton&apos;s proxy. It is
        still in the team&apos;s account, so the &ldquo;pause&rdquo; action reaches it through the team&apos;s
        connection, and its usage is recorded (as &ldquo;outside Baton&rdquo;).
      </p>
    </aside>
  );
}
