"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { TeamLink as Link } from "../layout/team-link";
import { useId, useState } from "react";
import { formatAgo, formatDateTime } from "../../lib/format";
import { errorText } from "../../lib/orkestr/errors";
import { teamKeys, teamMutations, teamQueries } from "../../lib/queries/team";
import { useNow } from "../../lib/use-now";
import {
  assignableRoles,
  canAdminister,
  canChangeRole,
  canLeave,
  canRemove,
  ROLES_SYNCED_DETAIL,
  TEAM_ROLES,
  type TeamRole,
} from "../../lib/team-rules";
import type { MemberDto, MemberListDto } from "../../lib/validations/team";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { Dialog, DialogActions } from "../ui/dialog";
import { Skeleton } from "../ui/skeleton";
import { TableScroll } from "../ui/table";

const SELECT =
  "h-8 rounded-md border border-input bg-background px-2 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring disabled:cursor-not-allowed disabled:opacity-60";

type Action =
  | { kind: "remove" | "disable" | "enable" | "unlock" | "sessions" | "transfer"; member: MemberDto }
  | { kind: "leave" }
  | null;

/** The members table of /team: role changes, removal, disabling, unlocking, sessions, transfer and leave. */
export function MembersCard({ teamId, canManage }: { teamId: string; canManage: boolean }) {
  const queryClient = useQueryClient();
  const list = useQuery(teamQueries.members());
  const [action, setAction] = useState<Action>(null);
  const [error, setError] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: teamKeys.all });
  const role = useMutation({
    mutationFn: ({ userId, to }: { userId: string; to: TeamRole }) => teamMutations.changeRole(userId, to),
    onSuccess: async () => {
      setError(null);
      await refresh();
    },
    onError: async (e) => {
      setError(errorText(e));
      await refresh();
    },
  });

  if (list.isPending)
    return (
      <div role="status" aria-label="Loading members" className="flex flex-col gap-2">
        <Skeleton className="h-10 w-full" />
        <Skeleton className="h-10 w-full" />
      </div>
    );
  if (list.isError)
    return (
      <Alert variant="destructive">
        <AlertTitle>Could not load the members</AlertTitle>
        <AlertDescription className="flex flex-wrap items-center gap-3 text-foreground">
          {errorText(list.error)}
          <Button size="sm" variant="outline" onClick={() => list.refetch()}>
            Retry
          </Button>
        </AlertDescription>
      </Alert>
    );

  const data: MemberListDto = list.data;
  const you = data.your_role;
  const facts = { activeOwners: data.members.filter((m) => m.role === "owner" && !m.disabled).length };
  const me = data.members.find((m) => m.is_you);
  const leaveRefusal = canLeave(you, facts);

  return (
    <section aria-labelledby="members-title" className="flex flex-col gap-3">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id="members-title" className="text-lg font-semibold">
          Members <span className="text-sm font-normal text-muted-foreground">({data.members.length})</span>
        </h2>
        <div className="flex flex-wrap gap-2">
          {you === "owner" && data.members.length > 1 ? (
            <Button
              size="sm"
              variant="outline"
              onClick={() => setAction({ kind: "transfer", member: data.members.find((m) => !m.is_you)! })}
            >
              Transfer ownership
            </Button>
          ) : null}
          {me ? (
            <Button
              size="sm"
              variant="outline"
              onClick={() => setAction({ kind: "leave" })}
              aria-describedby={leaveRefusal ? "leave-reason" : undefined}
            >
              Leave team
            </Button>
          ) : null}
        </div>
      </div>
      {leaveRefusal ? (
        <p id="leave-reason" className="text-xs text-muted-foreground">
          {leaveRefusal.detail}
        </p>
      ) : null}
      {error ? (
        <p role="alert" className="text-sm text-destructive">
          {error}
        </p>
      ) : null}
      <TableScroll className="rounded-lg border">
        <table className="w-full min-w-[44rem] text-sm">
          <caption className="sr-only">The members of {data.team.name}, owners first</caption>
          <thead className="border-b bg-muted/40 text-left text-xs text-muted-foreground">
            <tr>
              <th scope="col" className="px-3 py-2 font-medium">
                Member
              </th>
              <th scope="col" className="px-3 py-2 font-medium">
                Role
              </th>
              <th scope="col" className="px-3 py-2 font-medium">
                Sign-in
              </th>
              <th scope="col" className="px-3 py-2 font-medium">
                Last active
              </th>
              <th scope="col" className="px-3 py-2 font-medium">
                Sandboxes
              </th>
              {canManage ? (
                <th scope="col" className="px-3 py-2 font-medium">
                  <span className="sr-only">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {data.members.map((m) => (
              <MemberRow
                key={m.user_id}
                m={m}
                you={you}
                facts={facts}
                canManage={canManage}
                rolesSynced={data.roles_synced}
                busy={role.isPending && role.variables?.userId === m.user_id}
                onRole={(to) => role.mutate({ userId: m.user_id, to })}
                onAction={(kind) => setAction({ kind, member: m })}
              />
            ))}
          </tbody>
        </table>
      </TableScroll>
      <p className="text-xs text-muted-foreground">
        Removing or disabling a member keeps their sandboxes with the team; their sessions (when disabled) and their
        engine tokens for this team stop working at once.
      </p>
      <ActionDialogs action={action} teamId={teamId} members={data.members} onClose={() => setAction(null)} />
    </section>
  );
}

function MemberRow({
  m,
  you,
  facts,
  canManage,
  rolesSynced,
  busy,
  onRole,
  onAction,
}: {
  m: MemberDto;
  you: TeamRole;
  facts: { activeOwners: number };
  canManage: boolean;
  rolesSynced: boolean;
  busy: boolean;
  onRole: (to: TeamRole) => void;
  onAction: (kind: "remove" | "disable" | "enable" | "unlock" | "sessions") => void;
}) {
  const id = useId();
  const now = useNow();
  const target = { role: m.role, self: m.is_you };
  // The role select offers what the user may give; when they may not change this member at all, why.
  const refusals = TEAM_ROLES.filter((r) => r !== m.role).map((r) => canChangeRole(you, target, r, facts));
  const roleRefusal = !canManage
    ? { detail: "Only owners and admins change roles." }
    : rolesSynced
      ? { detail: ROLES_SYNCED_DETAIL }
      : m.disabled
        ? { detail: "Enable this member to change their role." }
        : refusals.every((r) => r !== null)
          ? (refusals.find((r) => r?.code === "last_owner") ??
            refusals.find((r) => r?.code === "owner_only") ??
            refusals[0]!)
          : null;
  const options = TEAM_ROLES.filter(
    (r) => r === m.role || (assignableRoles(you).includes(r) && canChangeRole(you, target, r, facts) === null),
  );
  const removeRefusal = canRemove(you, target, facts);
  const adminRefusal = canAdminister(you, target, { ...facts, disabling: true });
  const manageRefusal = canAdminister(you, target, facts);
  const locked = m.locked_until !== null;
  return (
    <tr className="border-b last:border-b-0" data-testid="member-row" data-email={m.email}>
      <th scope="row" className="px-3 py-2 text-left font-normal">
        <div className="flex flex-col">
          <span className="flex flex-wrap items-center gap-1.5 font-medium">
            {m.name || m.email}
            {m.is_you ? <Badge variant="outline">You</Badge> : null}
            {m.disabled ? <Badge variant="warning">Disabled</Badge> : null}
            {locked ? <Badge variant="destructive">Locked out</Badge> : null}
          </span>
          {m.name ? <span className="text-xs text-muted-foreground">{m.email}</span> : null}
        </div>
      </th>
      <td className="px-3 py-2">
        <label htmlFor={`${id}-role`} className="sr-only">
          Role of {m.email}
        </label>
        <select
          id={`${id}-role`}
          className={SELECT}
          value={m.role}
          disabled={roleRefusal !== null || busy}
          aria-describedby={roleRefusal ? `${id}-role-why` : undefined}
          onChange={(e) => onRole(e.target.value as TeamRole)}
          data-testid="role-select"
        >
          {options.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        {roleRefusal && canManage ? (
          <p id={`${id}-role-why`} className="mt-1 max-w-56 text-xs text-muted-foreground">
            {roleRefusal.detail}
          </p>
        ) : roleRefusal ? (
          <span id={`${id}-role-why`} className="sr-only">
            {roleRefusal.detail}
          </span>
        ) : null}
      </td>
      <td className="px-3 py-2">{m.sign_in_method === "sso" ? "SSO" : "Password"}</td>
      <td className="px-3 py-2" title={m.last_active_at ? formatDateTime(m.last_active_at) : undefined}>
        {m.last_active_at
          ? now === null
            ? formatDateTime(m.last_active_at)
            : formatAgo(Math.max(0, now - Date.parse(m.last_active_at)))
          : "Never"}
      </td>
      <td className="px-3 py-2">
        {m.sandbox_count === null ? (
          <span className="text-muted-foreground" title="The team's orkestr API could not be asked">
            —
          </span>
        ) : (
          <Link href={m.sandboxes_href} className="text-primary underline-offset-4 hover:underline">
            {m.sandbox_count}
            <span className="sr-only"> sandboxes of {m.email}</span>
          </Link>
        )}
      </td>
      {canManage ? (
        <td className="px-3 py-2">
          <div className="flex flex-wrap justify-end gap-1.5">
            {manageRefusal === null ? (
              <Button size="sm" variant="ghost" onClick={() => onAction("sessions")}>
                Sessions<span className="sr-only"> of {m.email}</span>
              </Button>
            ) : null}
            {locked && manageRefusal === null ? (
              <Button size="sm" variant="outline" onClick={() => onAction("unlock")}>
                Unlock<span className="sr-only"> {m.email}</span>
              </Button>
            ) : null}
            {m.disabled && manageRefusal === null ? (
              <Button size="sm" variant="outline" onClick={() => onAction("enable")}>
                Enable<span className="sr-only"> {m.email}</span>
              </Button>
            ) : null}
            {!m.disabled && adminRefusal === null ? (
              <Button size="sm" variant="outline" onClick={() => onAction("disable")}>
                Disable<span className="sr-only"> {m.email}</span>
              </Button>
            ) : null}
            {removeRefusal === null ? (
              <Button size="sm" variant="destructive" onClick={() => onAction("remove")}>
                Remove<span className="sr-only"> {m.email}</span>
              </Button>
            ) : null}
          </div>
        </td>
      ) : null}
    </tr>
  );
}

function ActionDialogs({
  action,
  teamId,
  members,
  onClose,
}: {
  action: Action;
  teamId: string;
  members: MemberDto[];
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const [transferTo, setTransferTo] = useState<string>("");
  const candidates = members.filter((m) => !m.is_you && !m.disabled && m.role !== "owner");
  const run = useMutation({
    mutationFn: async (): Promise<unknown> => {
      if (!action) return;
      switch (action.kind) {
        case "remove":
          return teamMutations.remove(action.member.user_id);
        case "disable":
          return teamMutations.disable(action.member.user_id);
        case "enable":
          return teamMutations.enable(action.member.user_id);
        case "unlock":
          return teamMutations.unlock(action.member.user_id);
        case "transfer":
          return teamMutations.transferOwnership(transferTo || candidates[0]!.user_id);
        case "leave":
          return teamMutations.leave(teamId);
        case "sessions":
          return;
      }
    },
    onSuccess: async () => {
      setError(null);
      const left = action?.kind === "leave";
      onClose();
      if (left) {
        window.location.assign("/");
        return;
      }
      await queryClient.invalidateQueries({ queryKey: teamKeys.all });
    },
    onError: (e) => setError(errorText(e)),
  });
  const close = (open: boolean) => {
    if (!open) {
      setError(null);
      setTransferTo("");
      onClose();
    }
  };
  if (!action) return null;
  if (action.kind === "sessions") return <SessionsDialog member={action.member} onClose={onClose} />;
  const who = action.kind === "leave" ? "" : action.member.name || action.member.email;
  const copy: Record<
    Exclude<NonNullable<Action>["kind"], "sessions">,
    { title: string; body: string; verb: string }
  > = {
    remove: {
      title: `Remove ${who} from the team?`,
      body: "Their sandboxes stay with the team. Their engine tokens for this team are revoked at once, and they lose access to everything of the team. You can invite them again later.",
      verb: "Remove member",
    },
    disable: {
      title: `Disable ${who}?`,
      body: "Every session of theirs ends now, and their engine tokens for this team are revoked at once. They stay listed here, and you can enable them again.",
      verb: "Disable member",
    },
    enable: {
      title: `Enable ${who}?`,
      body: "Their role in this team works again the next time they sign in.",
      verb: "Enable member",
    },
    unlock: {
      title: `Unlock ${who}?`,
      body: "Their failed sign-in attempts are forgotten, so they can try again now.",
      verb: "Unlock sign-in",
    },
    transfer: {
      title: "Transfer ownership",
      body: "The member you choose becomes an owner; you become an admin.",
      verb: "Transfer ownership",
    },
    leave: {
      title: "Leave this team?",
      body: "You lose access to the team's sandboxes at once, and your engine tokens for it are revoked. Its sandboxes stay with the team.",
      verb: "Leave team",
    },
  };
  const c = copy[action.kind];
  const destructive = action.kind === "remove" || action.kind === "disable" || action.kind === "leave";
  return (
    <Dialog open onOpenChange={close} title={c.title} description={c.body}>
      {action.kind === "transfer" ? (
        <div className="flex flex-col gap-1.5">
          <label htmlFor="transfer-to" className="text-sm font-medium">
            New owner
          </label>
          {candidates.length === 0 ? (
            <p className="text-sm text-muted-foreground">No other active member can become owner.</p>
          ) : (
            <select
              id="transfer-to"
              className={SELECT}
              value={transferTo || candidates[0]!.user_id}
              onChange={(e) => setTransferTo(e.target.value)}
            >
              {candidates.map((m) => (
                <option key={m.user_id} value={m.user_id}>
                  {m.name ? `${m.name} (${m.email})` : m.email} · {m.role}
                </option>
              ))}
            </select>
          )}
        </div>
      ) : null}
      {error ? (
        <p role="alert" className="text-sm text-destructive">
          {error}
        </p>
      ) : null}
      <DialogActions>
        <Button
          variant={destructive ? "destructive" : "default"}
          disabled={run.isPending || (action.kind === "transfer" && candidates.length === 0)}
          onClick={() => run.mutate()}
        >
          {run.isPending ? "Working…" : c.verb}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

function SessionsDialog({ member, onClose }: { member: MemberDto; onClose: () => void }) {
  const queryClient = useQueryClient();
  const sessions = useQuery(teamQueries.sessions(member.user_id));
  const [error, setError] = useState<string | null>(null);
  const revoke = useMutation({
    mutationFn: (sessionId: string) => teamMutations.revokeSession(member.user_id, sessionId),
    onSuccess: async () => {
      setError(null);
      await queryClient.invalidateQueries({ queryKey: teamKeys.all });
    },
    onError: (e) => setError(errorText(e)),
  });
  return (
    <Dialog
      open
      onOpenChange={(open) => !open && onClose()}
      title={`Sessions of ${member.name || member.email}`}
      description="Signed-in browsers, most recently used first. Revoking one signs that browser out at once."
    >
      {sessions.isPending ? (
        <div role="status" aria-label="Loading sessions">
          <Skeleton className="h-12 w-full" />
        </div>
      ) : sessions.isError ? (
        <p role="alert" className="text-sm text-destructive">
          {errorText(sessions.error)}
        </p>
      ) : sessions.data.sessions.length === 0 ? (
        <p className="text-sm text-muted-foreground">No active sessions.</p>
      ) : (
        <ul className="flex max-h-80 flex-col gap-2 overflow-y-auto">
          {sessions.data.sessions.map((s) => (
            <li key={s.id} className="flex items-start justify-between gap-3 rounded-md border p-2 text-xs">
              <div className="flex min-w-0 flex-col">
                <span className="truncate" title={s.user_agent ?? undefined}>
                  {s.user_agent ?? "Unknown browser"}
                </span>
                <span className="text-muted-foreground">
                  {s.ip ?? "unknown address"} · last used {formatDateTime(s.last_seen_at)}
                  {s.current ? " · this session" : ""}
                </span>
              </div>
              <Button size="sm" variant="outline" disabled={revoke.isPending} onClick={() => revoke.mutate(s.id)}>
                Revoke
              </Button>
            </li>
          ))}
        </ul>
      )}
      {error ? (
        <p role="alert" className="text-sm text-destructive">
          {error}
        </p>
      ) : null}
    </Dialog>
  );
}
