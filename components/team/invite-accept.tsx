"use client";

import { useQuery } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { formatDateTime } from "../../lib/format";
import { withTeam } from "../../lib/team-param";
import { TeamLink as Link } from "../layout/team-link";
import { errorText, OrkestrError } from "../../lib/orkestr/errors";
import { authMutations } from "../../lib/queries/auth";
import { teamMutations } from "../../lib/queries/team";
import { AuthForm } from "../auth/auth-form";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { Card, CardContent, CardDescription, CardHeader } from "../ui/card";
import { Input } from "../ui/input";
import { Label } from "../ui/label";
import { Skeleton } from "../ui/skeleton";

/** lib/validations/auth.ts PASSWORD_MIN_LENGTH (not imported: it would bring zod into this page). */
const PASSWORD_MIN_LENGTH = 12;

const ENDED: Record<string, { title: string; text: string }> = {
  used: {
    title: "This invitation was already used",
    text: "Sign in with the account that accepted it, or ask the team for a new invitation.",
  },
  revoked: {
    title: "This invitation was withdrawn",
    text: "It was revoked, or replaced by a newer invitation. Use the latest link you received, or ask the team for a new one.",
  },
  expired: {
    title: "This invitation has expired",
    text: "Invitation links last 7 days. Ask the team's owner or an admin to send a new one.",
  },
};

function Frame({ title, description, children }: { title: string; description?: string; children: React.ReactNode }) {
  return (
    <Card>
      <CardHeader>
        <h1 className="text-xl font-semibold tracking-tight">{title}</h1>
        {description ? <CardDescription>{description}</CardDescription> : null}
      </CardHeader>
      <CardContent className="flex flex-col gap-4">{children}</CardContent>
    </Card>
  );
}

/** The invitation page's body: what the link is for, and the one way on that fits. */
export function InviteAccept({ token }: { token: string }) {
  const lookup = useQuery({
    queryKey: ["invitation", "lookup"],
    queryFn: () => teamMutations.lookup(token),
    retry: false,
    refetchOnWindowFocus: false,
  });
  const [accepting, setAccepting] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // The team the new account joined (the accept answer's slug): the first page is in that team.
  const joined = useRef<string | null>(null);
  const loginHref = `/login?next=${encodeURIComponent(`/invite/${token}`)}`;

  if (lookup.isPending)
    return (
      <Frame title="Invitation">
        <div role="status" aria-label="Loading the invitation" className="flex flex-col gap-2">
          <Skeleton className="h-5 w-3/4" />
          <Skeleton className="h-9 w-full" />
        </div>
      </Frame>
    );
  if (lookup.isError) {
    const notFound = lookup.error instanceof OrkestrError && lookup.error.status === 404;
    return (
      <Frame title={notFound ? "This invitation link is not valid" : "Could not open the invitation"}>
        <Alert variant="destructive" data-testid="invitation-state" data-state={notFound ? "unknown" : "error"}>
          <AlertDescription className="text-foreground">{errorText(lookup.error)}</AlertDescription>
        </Alert>
        {notFound ? null : (
          <Button variant="outline" onClick={() => lookup.refetch()}>
            Try again
          </Button>
        )}
      </Frame>
    );
  }

  const inv = lookup.data;
  const ended = ENDED[inv.state];
  if (ended)
    return (
      <Frame title={ended.title}>
        <Alert variant="warning" data-testid="invitation-state" data-state={inv.state}>
          <AlertTitle>
            {inv.team.name} · {inv.email}
          </AlertTitle>
          <AlertDescription className="text-foreground">{ended.text}</AlertDescription>
        </Alert>
        <Link href="/login" className="text-sm text-primary underline underline-offset-4">
          Go to sign in
        </Link>
      </Frame>
    );

  const description = `${inv.invited_by ? `${inv.invited_by} invited` : "You are invited:"} ${inv.email} to join ${inv.team.name} as ${inv.role}. The link expires on ${formatDateTime(inv.expires_at)}.`;
  const title = `Join ${inv.team.name}`;

  if (inv.signed_in_as) {
    const same = inv.signed_in_as.toLowerCase() === inv.email.toLowerCase();
    if (!same)
      return (
        <Frame title={title} description={description}>
          <Alert variant="warning" data-testid="invitation-state" data-state="other-account">
            <AlertDescription className="text-foreground">
              You are signed in as {inv.signed_in_as}, but this invitation is for {inv.email}. Sign out, then sign in as{" "}
              {inv.email} to accept it.
            </AlertDescription>
          </Alert>
          <Button
            variant="outline"
            onClick={async () => {
              await authMutations.logout(false).catch(() => undefined);
              window.location.assign(loginHref);
            }}
          >
            Sign out and sign in as {inv.email}
          </Button>
        </Frame>
      );
    return (
      <Frame title={title} description={description}>
        {error ? (
          <Alert variant="destructive">
            <AlertDescription className="text-foreground">{error}</AlertDescription>
          </Alert>
        ) : null}
        <Button
          aria-disabled={accepting}
          onClick={async () => {
            if (accepting) return;
            setAccepting(true);
            setError(null);
            try {
              const accepted = await teamMutations.accept({ token });
              // Into the inviting team, not the default one: its members page, with ?team=<slug>.
              window.location.assign(withTeam("/team", accepted.team_slug));
            } catch (e) {
              setError(errorText(e));
              setAccepting(false);
            }
          }}
        >
          {accepting ? "Joining…" : `Accept and join ${inv.team.name}`}
        </Button>
      </Frame>
    );
  }

  if (inv.account_exists)
    return (
      <Frame title={title} description={description}>
        <p className="text-sm">There is already a Baton account for {inv.email}. Sign in with it to accept.</p>
        <Button asChild>
          <Link href={loginHref}>Sign in to accept</Link>
        </Button>
      </Frame>
    );

  return (
    <Frame title={title} description={description}>
      <AuthForm
        send={(form) =>
          teamMutations.accept({
            token,
            name: String(form.get("name") ?? "").trim(),
            password: String(form.get("password") ?? ""),
          })
        }
        proceed={(answer) => {
          joined.current = (answer as { team_slug?: string | null } | null)?.team_slug ?? null;
          return true;
        }}
        next={() => withTeam("/sandboxes", joined.current)}
        submitLabel="Create account and join"
        pendingLabel="Creating your account…"
      >
        <div className="flex flex-col gap-2">
          <Label htmlFor="invite-email">Email</Label>
          <Input id="invite-email" type="email" value={inv.email} readOnly autoComplete="username" />
        </div>
        <div className="flex flex-col gap-2">
          <Label htmlFor="invite-name">Your name</Label>
          <Input id="invite-name" name="name" autoComplete="name" required maxLength={100} />
        </div>
        <div className="flex flex-col gap-2">
          <Label htmlFor="invite-password">Password</Label>
          <Input
            id="invite-password"
            name="password"
            type="password"
            autoComplete="new-password"
            required
            minLength={PASSWORD_MIN_LENGTH}
            aria-describedby="invite-password-hint"
          />
          <p id="invite-password-hint" className="text-xs text-muted-foreground">
            At least {PASSWORD_MIN_LENGTH} characters.
          </p>
        </div>
      </AuthForm>
    </Frame>
  );
}
