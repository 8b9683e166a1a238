"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { formatDateTime } from "../../lib/format";
import { withTeam } from "../../lib/team-param";
import { errorText, OrkestrError } from "../../lib/orkestr/errors";
import { teamKeys, teamMutations, teamQueries } from "../../lib/queries/team";
import { assignableRoles, type TeamRole } from "../../lib/team-rules";
import type { InvitationDto, IssuedInvitationDto } from "../../lib/validations/team";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../ui/card";
import { Dialog, DialogActions } from "../ui/dialog";
import { Input } from "../ui/input";
import { Label } from "../ui/label";
import { SecretOnce } from "../ui/secret-once";
import { Skeleton } from "../ui/skeleton";

const SELECT =
  "h-9 rounded-md border border-input bg-background px-2 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring";

/** The link of a new invitation, shown once, with a copy button and whether it was mailed. */
function IssuedLink({ issued, onDone }: { issued: IssuedInvitationDto; onDone: () => void }) {
  return (
    <SecretOnce
      variant={issued.mailed ? "success" : "warning"}
      data-testid="invitation-link"
      title={
        issued.mailed ? `Invitation mailed to ${issued.invitation.email}` : `Invitation for ${issued.invitation.email}`
      }
      notice={
        <>
          {issued.mailed
            ? "The link below is the one in the mail."
            : (issued.mail_error ?? "It was not mailed: pass the link on yourself.")}{" "}
          It is shown only now, works once, and expires on {formatDateTime(issued.invitation.expires_at)}.
          {issued.replaced.length ? " The earlier invitation to this address no longer works." : ""}
        </>
      }
      value={issued.link}
      copyLabel="Copy link"
      valueTestId="invitation-url"
      onDone={onDone}
    />
  );
}

/** Invite by email (a role up to the inviter's own), the link shown once, and the pending list. */
export function InvitationsCard({ yourRole }: { yourRole: TeamRole }) {
  const id = useId();
  const queryClient = useQueryClient();
  const pending = useQuery(teamQueries.invitations());
  const roles = assignableRoles(yourRole);
  const [issued, setIssued] = useState<IssuedInvitationDto | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [confirmRevoke, setConfirmRevoke] = useState<InvitationDto | null>(null);
  const [rowError, setRowError] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: teamKeys.all });
  const invite = useMutation({
    mutationFn: ({ email, role }: { email: string; role: TeamRole }) => teamMutations.invite(email, role),
    onSuccess: async (result) => {
      setIssued(result);
      setFormError(null);
      await refresh();
    },
    onError: (e) => setFormError(e instanceof OrkestrError ? (e.forField("email") ?? errorText(e)) : errorText(e)),
  });
  const resend = useMutation({
    mutationFn: (invId: string) => teamMutations.resend(invId),
    onSuccess: async (result) => {
      setIssued(result);
      setRowError(null);
      await refresh();
    },
    onError: (e) => setRowError(errorText(e)),
  });
  const revoke = useMutation({
    mutationFn: (invId: string) => teamMutations.revoke(invId),
    onSuccess: async () => {
      setConfirmRevoke(null);
      setRowError(null);
      await refresh();
    },
    onError: (e) => setRowError(errorText(e)),
  });

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    invite.mutate({ email: String(form.get("email") ?? ""), role: String(form.get("role")) as TeamRole });
    event.currentTarget.reset();
  }

  return (
    <Card>
      <CardHeader>
        <CardTitle>Invitations</CardTitle>
        <CardDescription>
          Invite someone by email. The link works once and expires after 7 days; you can give a role up to your own (
          {yourRole}).
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-4">
        <form onSubmit={onSubmit} aria-label="Invite a member" className="flex flex-col gap-3 sm:flex-row sm:items-end">
          <div className="flex min-w-0 flex-1 flex-col gap-1.5">
            <Label htmlFor={`${id}-email`}>Email</Label>
            <Input
              id={`${id}-email`}
              name="email"
              type="email"
              required
              autoComplete="off"
              placeholder="ana@example.com"
              aria-invalid={formError ? true : undefined}
              aria-describedby={formError ? `${id}-error` : undefined}
            />
          </div>
          <div className="flex flex-col gap-1.5">
            <Label htmlFor={`${id}-role`}>Role</Label>
            <select
              id={`${id}-role`}
              name="role"
              className={SELECT}
              defaultValue={roles.includes("member") ? "member" : roles[0]}
            >
              {roles.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </div>
          <Button type="submit" disabled={invite.isPending}>
            {invite.isPending ? "Inviting…" : "Invite"}
          </Button>
        </form>
        {formError ? (
          <p id={`${id}-error`} role="alert" className="text-sm text-destructive">
            {formError}
          </p>
        ) : null}
        {issued ? <IssuedLink issued={issued} onDone={() => setIssued(null)} /> : null}

        <section aria-labelledby={`${id}-pending`} className="flex flex-col gap-2">
          <h3 id={`${id}-pending`} className="text-sm font-semibold">
            Pending
          </h3>
          {rowError ? (
            <p role="alert" className="text-sm text-destructive">
              {rowError}
            </p>
          ) : null}
          {pending.isPending ? (
            <div role="status" aria-label="Loading invitations">
              <Skeleton className="h-10 w-full" />
            </div>
          ) : pending.isError ? (
            <div role="alert" className="flex flex-wrap items-center gap-2 text-sm text-destructive">
              {errorText(pending.error)}
              <Button size="sm" variant="outline" onClick={() => pending.refetch()}>
                Retry
              </Button>
            </div>
          ) : pending.data.invitations.length === 0 ? (
            <p className="text-sm text-muted-foreground" data-testid="invitations-empty">
              No pending invitations.
            </p>
          ) : (
            <ul className="flex flex-col gap-2">
              {pending.data.invitations.map((inv) => (
                <li
                  key={inv.id}
                  className="flex flex-col gap-2 rounded-md border p-3 text-sm sm:flex-row sm:items-center sm:justify-between"
                  data-testid="invitation-row"
                  data-email={inv.email}
                >
                  <div className="flex min-w-0 flex-col">
                    <span className="truncate font-medium">{inv.email}</span>
                    <span className="text-xs text-muted-foreground">
                      {inv.role} · invited {formatDateTime(inv.created_at)}
                      {inv.invited_by ? ` by ${inv.invited_by.name || inv.invited_by.email}` : ""} · expires{" "}
                      {formatDateTime(inv.expires_at)}
                    </span>
                  </div>
                  {roles.includes(inv.role) ? (
                    <div className="flex gap-2">
                      <Button
                        size="sm"
                        variant="outline"
                        disabled={resend.isPending}
                        onClick={() => resend.mutate(inv.id)}
                      >
                        Resend<span className="sr-only"> to {inv.email}</span>
                      </Button>
                      <Button size="sm" variant="destructive" onClick={() => setConfirmRevoke(inv)}>
                        Revoke<span className="sr-only"> the invitation of {inv.email}</span>
                      </Button>
                    </div>
                  ) : (
                    <p className="text-xs text-muted-foreground">Only an owner manages an owner&apos;s invitation.</p>
                  )}
                </li>
              ))}
            </ul>
          )}
        </section>
      </CardContent>
      <Dialog
        open={confirmRevoke !== null}
        onOpenChange={(open) => !open && setConfirmRevoke(null)}
        title={`Revoke the invitation of ${confirmRevoke?.email ?? ""}?`}
        description="Its link stops working at once and says it was withdrawn. You can invite them again."
      >
        <DialogActions>
          <Button
            variant="destructive"
            disabled={revoke.isPending}
            onClick={() => confirmRevoke && revoke.mutate(confirmRevoke.id)}
          >
            {revoke.isPending ? "Revoking…" : "Revoke invitation"}
          </Button>
        </DialogActions>
      </Dialog>
    </Card>
  );
}

/** The signed-in user's own pending invitations (to this team or others), with accept and decline. */
export function MyInvitations() {
  const queryClient = useQueryClient();
  const mine = useQuery(teamQueries.mine());
  const [error, setError] = useState<string | null>(null);
  const act = useMutation({
    mutationFn: async ({ invId, accept }: { invId: string; accept: boolean }): Promise<string | null> => {
      if (accept) return (await teamMutations.acceptMine(invId)).team_slug ?? null;
      await teamMutations.declineMine(invId);
      return null;
    },
    onSuccess: async (slug, { accept }) => {
      setError(null);
      if (accept) {
        // The new membership changes the session's teams: a full load of the team that invited,
        // so every part of the console sees it (its members page, ?team=<slug>).
        if (slug) window.location.assign(withTeam("/team", slug));
        else window.location.reload();
        return;
      }
      await queryClient.invalidateQueries({ queryKey: teamKeys.mine() });
    },
    onError: (e) => setError(errorText(e)),
  });
  if (!mine.data || mine.data.invitations.length === 0) return null;
  return (
    <Alert variant="success" role="region" aria-label="Your invitations" data-testid="my-invitations">
      <AlertTitle>You have been invited</AlertTitle>
      <AlertDescription className="flex flex-col gap-2 text-foreground">
        <ul className="flex flex-col gap-2">
          {mine.data.invitations.map((inv) => (
            <li key={inv.id} className="flex flex-col gap-2 sm:flex-row sm:items-center sm:justify-between">
              <span>
                <strong>{inv.team.name}</strong> as {inv.role}
                {inv.invited_by ? `, from ${inv.invited_by.name || inv.invited_by.email}` : ""} (expires{" "}
                {formatDateTime(inv.expires_at)})
              </span>
              <span className="flex gap-2">
                <Button size="sm" disabled={act.isPending} onClick={() => act.mutate({ invId: inv.id, accept: true })}>
                  Accept<span className="sr-only"> the invitation to {inv.team.name}</span>
                </Button>
                <Button
                  size="sm"
                  variant="outline"
                  disabled={act.isPending}
                  onClick={() => act.mutate({ invId: inv.id, accept: false })}
                >
                  Decline<span className="sr-only"> the invitation to {inv.team.name}</span>
                </Button>
              </span>
            </li>
          ))}
        </ul>
        {error ? (
          <p role="alert" className="text-sm text-destructive">
            {error}
          </p>
        ) : null}
      </AlertDescription>
    </Alert>
  );
}
