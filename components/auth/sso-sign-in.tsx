"use client";

import { useId, useState, type FormEvent } from "react";
import { ssoStartHref } from "../../lib/queries/sso";
import { nextPathFromSearch } from "../../lib/safe-next-path";
import { Alert, AlertDescription } from "../ui/alert";
import { Button } from "../ui/button";
import { Input } from "../ui/input";
import { Label } from "../ui/label";

/**
 * "Sign in with SSO": a work email (its domain names the team) or a team's slug. The browser goes
 * to /api/auth/sso/start, which sends it on to the team's identity provider.
 */
export function SsoSignIn({ error }: { error: string | null }) {
  const id = useId();
  const [value, setValue] = useState("");
  const [pending, setPending] = useState(false);
  function onSubmit(event: FormEvent) {
    event.preventDefault();
    const v = value.trim();
    if (!v) return;
    setPending(true);
    const next = nextPathFromSearch(window.location.search, "/sandboxes");
    window.location.assign(ssoStartHref(v.includes("@") ? { email: v, next } : { team: v.toLowerCase(), next }));
  }
  return (
    <form onSubmit={onSubmit} className="flex flex-col gap-3" aria-label="Sign in with SSO" aria-busy={pending}>
      {error ? (
        <Alert variant="destructive" data-testid="sso-error">
          <AlertDescription className="text-foreground">{error}</AlertDescription>
        </Alert>
      ) : null}
      <div className="flex flex-col gap-2">
        <Label htmlFor={`${id}-sso`}>Work email or team</Label>
        <Input
          id={`${id}-sso`}
          name="sso"
          value={value}
          onChange={(e) => setValue(e.target.value)}
          autoComplete="email"
          placeholder="you@company.com or team-slug"
          required
        />
      </div>
      <Button type="submit" variant="outline" className="w-full" aria-disabled={pending}>
        {pending ? "Opening your identity provider…" : "Sign in with SSO"}
      </Button>
    </form>
  );
}
