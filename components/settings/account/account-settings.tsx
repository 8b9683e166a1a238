"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { formatDateTime } from "../../../lib/format";
import { errorText } from "../../../lib/orkestr/errors";
import { accountKeys, accountMutations, accountQueries } from "../../../lib/queries/account";
import type { SecurityDto, SessionDto } from "../../../lib/validations/account";
import { PASSWORD_MIN_LENGTH } from "../../../lib/password-policy";
import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Badge } from "../../ui/badge";
import { Button } from "../../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { Dialog, DialogActions } from "../../ui/dialog";
import { Input } from "../../ui/input";
import { Label } from "../../ui/label";
import { toast } from "../../ui/toast";
import { TwoFactorCard } from "./two-factor-card";

/** Settings → Account: profile, password, sessions and the second factor, each a card of its own. */
export function AccountSettings({
  user,
  security,
  sessions,
}: {
  user: { name: string; email: string };
  security: SecurityDto;
  sessions: SessionDto[];
}) {
  return (
    <div className="flex max-w-3xl flex-col gap-6">
      <ProfileCard user={user} />
      {security.has_password ? <PasswordCard /> : null}
      <TwoFactorCard initial={security} />
      <SessionsCard initial={sessions} />
    </div>
  );
}

/** A form error slot: the server's `detail`, read out when it appears. */
export function FormError({ id, error }: { id: string; error: string | null }) {
  if (!error) return null;
  return (
    <p id={id} role="alert" className="text-sm text-destructive">
      {error}
    </p>
  );
}

function ProfileCard({ user }: { user: { name: string; email: string } }) {
  const [name, setName] = useState(user.name);
  const [saved, setSaved] = useState(user.name);
  const [error, setError] = useState<string | null>(null);
  const errorId = useId();
  const rename = useMutation({
    mutationFn: accountMutations.rename,
    onSuccess: (res) => {
      setError(null);
      setSaved(res.user.name);
      setName(res.user.name);
      toast.success("Name saved");
    },
    onError: (err) => setError(errorText(err)),
  });
  function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (!rename.isPending) rename.mutate(name);
  }
  return (
    <Card>
      <CardHeader>
        <CardTitle>Profile</CardTitle>
        <CardDescription>Your name is what your team sees in member lists and the audit log.</CardDescription>
      </CardHeader>
      <CardContent>
        <form onSubmit={onSubmit} className="flex flex-col gap-4" aria-busy={rename.isPending}>
          <div className="flex flex-col gap-2">
            <Label htmlFor="profile-email">Email</Label>
            <Input id="profile-email" value={user.email} readOnly aria-readonly className="bg-muted" />
          </div>
          <div className="flex flex-col gap-2">
            <Label htmlFor="profile-name">Name</Label>
            <Input
              id="profile-name"
              name="name"
              value={name}
              onChange={(e) => setName(e.target.value)}
              maxLength={100}
              required
              autoComplete="name"
              aria-invalid={error ? true : undefined}
              aria-describedby={error ? errorId : undefined}
            />
          </div>
          <FormError id={errorId} error={error} />
          <div>
            <Button type="submit" disabled={rename.isPending || name.trim() === saved || name.trim() === ""}>
              {rename.isPending ? "Saving…" : "Save name"}
            </Button>
          </div>
        </form>
      </CardContent>
    </Card>
  );
}

function PasswordCard() {
  const queryClient = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const errorId = useId();
  const change = useMutation({
    mutationFn: accountMutations.changePassword,
    onSuccess: async (res, _vars) => {
      setError(null);
      const others =
        res.sessions_revoked === 0
          ? "No other session was signed in."
          : `${res.sessions_revoked} other session${res.sessions_revoked === 1 ? " was" : "s were"} signed out.`;
      setDone(`Password changed. ${others}`);
      await queryClient.invalidateQueries({ queryKey: accountKeys.all });
    },
    onError: (err) => setError(errorText(err)),
  });
  function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    if (change.isPending) return;
    const form = new FormData(e.currentTarget);
    const current = String(form.get("current_password") ?? "");
    const next = String(form.get("new_password") ?? "");
    const again = String(form.get("confirm_password") ?? "");
    setDone(null);
    if (next !== again) return setError("The new password and its repetition differ.");
    if (next.length < PASSWORD_MIN_LENGTH)
      return setError(`New password: must be at least ${PASSWORD_MIN_LENGTH} characters.`);
    const target = e.currentTarget;
    change.mutate({ current_password: current, new_password: next }, { onSuccess: () => target.reset() });
  }
  return (
    <Card>
      <CardHeader>
        <CardTitle>Password</CardTitle>
        <CardDescription>
          Changing it signs out every other browser and device; this one stays signed in.
        </CardDescription>
      </CardHeader>
      <CardContent>
        <form
          method="post"
          onSubmit={onSubmit}
          className="flex flex-col gap-4"
          aria-busy={change.isPending}
          aria-describedby={error ? errorId : undefined}
        >
          <div className="flex flex-col gap-2">
            <Label htmlFor="password-current">Current password</Label>
            <Input
              id="password-current"
              name="current_password"
              type="password"
              autoComplete="current-password"
              required
            />
          </div>
          <div className="grid gap-4 sm:grid-cols-2">
            <div className="flex flex-col gap-2">
              <Label htmlFor="password-new">New password</Label>
              <Input
                id="password-new"
                name="new_password"
                type="password"
                autoComplete="new-password"
                minLength={PASSWORD_MIN_LENGTH}
                required
                aria-describedby="password-new-hint"
              />
              <p id="password-new-hint" className="text-xs text-muted-foreground">
                At least {PASSWORD_MIN_LENGTH} characters.
              </p>
            </div>
            <div className="flex flex-col gap-2">
              <Label htmlFor="password-confirm">New password again</Label>
              <Input
                id="password-confirm"
                name="confirm_password"
                type="password"
                autoComplete="new-password"
                required
              />
            </div>
          </div>
          <FormError id={errorId} error={error} />
          {done ? (
            <p role="status" className="text-sm text-foreground">
              {done}
            </p>
          ) : null}
          <div>
            <Button type="submit" aria-disabled={change.isPending}>
              {change.isPending ? "Changing…" : "Change password"}
            </Button>
          </div>
        </form>
      </CardContent>
    </Card>
  );
}

/** "Firefox on Linux"-style words for a user agent, or the string itself when nothing is recognised. */
export function describeAgent(ua: string | null): string {
  if (!ua) return "Unknown browser";
  const browser = /Edg\//.test(ua)
    ? "Edge"
    : /Firefox\//.test(ua)
      ? "Firefox"
      : /Chrom(e|ium)\//.test(ua)
        ? "Chrome"
        : /Safari\//.test(ua)
          ? "Safari"
          : /curl|node|undici|vitest/i.test(ua)
            ? "A program"
            : null;
  const os = /Android/.test(ua)
    ? "Android"
    : /iPhone|iPad/.test(ua)
      ? "iOS"
      : /Mac OS X/.test(ua)
        ? "macOS"
        : /Windows/.test(ua)
          ? "Windows"
          : /Linux/.test(ua)
            ? "Linux"
            : null;
  if (!browser) return ua.length > 60 ? `${ua.slice(0, 57)}…` : ua;
  return os ? `${browser} on ${os}` : browser;
}

function SessionsCard({ initial }: { initial: SessionDto[] }) {
  const queryClient = useQueryClient();
  const list = useQuery({ ...accountQueries.sessions(), initialData: { sessions: initial } });
  const [confirm, setConfirm] = useState<SessionDto | null>(null);
  const [error, setError] = useState<string | null>(null);
  const revoke = useMutation({
    mutationFn: (s: SessionDto) => accountMutations.revokeSession(s.id),
    onSuccess: async (res) => {
      setConfirm(null);
      setError(null);
      if (res.current) {
        window.location.assign("/login");
        return;
      }
      toast.success("Session signed out");
      await queryClient.invalidateQueries({ queryKey: accountKeys.all });
    },
    onError: (err) => setError(errorText(err)),
  });
  const sessions = list.data.sessions;
  return (
    <Card>
      <CardHeader>
        <CardTitle>Sessions</CardTitle>
        <CardDescription>Where you are signed in. Sign out any you do not recognise.</CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-3">
        {list.isError ? (
          <Alert variant="destructive">
            <AlertTitle>Could not load your sessions</AlertTitle>
            <AlertDescription className="flex flex-wrap items-center gap-3 text-foreground">
              {errorText(list.error)}
              <Button size="sm" variant="outline" onClick={() => list.refetch()}>
                Retry
              </Button>
            </AlertDescription>
          </Alert>
        ) : null}
        {sessions.length === 0 ? (
          <p className="text-sm text-muted-foreground">No live sessions.</p>
        ) : (
          <ul className="flex flex-col divide-y divide-border rounded-md border" aria-busy={list.isFetching}>
            {sessions.map((s) => (
              <li
                key={s.id}
                className="flex flex-col gap-2 p-3 sm:flex-row sm:items-center sm:justify-between"
                data-testid="session-row"
              >
                <div className="min-w-0">
                  <p className="flex flex-wrap items-center gap-2 text-sm font-medium">
                    {describeAgent(s.user_agent)}
                    {s.current ? <Badge variant="secondary">This browser</Badge> : null}
                  </p>
                  <p className="text-xs text-muted-foreground">
                    {s.ip ? `${s.ip} · ` : ""}last active {formatDateTime(s.last_seen_at)} · signed in{" "}
                    {formatDateTime(s.created_at)}
                  </p>
                </div>
                <Button
                  size="sm"
                  variant="outline"
                  onClick={() => setConfirm(s)}
                  aria-label={`Sign out ${s.current ? "this browser" : describeAgent(s.user_agent)}`}
                >
                  Sign out
                </Button>
              </li>
            ))}
          </ul>
        )}
        <FormError id="sessions-error" error={error} />
      </CardContent>
      <Dialog
        open={confirm !== null}
        onOpenChange={(open) => !open && setConfirm(null)}
        title={confirm?.current ? "Sign out this browser?" : "Sign out this session?"}
        description={
          confirm?.current
            ? "You will be taken to the sign-in page."
            : `${describeAgent(confirm?.user_agent ?? null)} will have to sign in again.`
        }
      >
        <DialogActions>
          <Button variant="destructive" onClick={() => confirm && revoke.mutate(confirm)} disabled={revoke.isPending}>
            {revoke.isPending ? "Signing out…" : "Sign out"}
          </Button>
        </DialogActions>
      </Dialog>
    </Card>
  );
}
