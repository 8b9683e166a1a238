"use client";

import { useId, useState, type FormEvent } from "react";
import { Alert, AlertDescription } from "../ui/alert";
import { Button } from "../ui/button";
import { Input } from "../ui/input";
import { Label } from "../ui/label";
import { postJson } from "./post-json";

/**
 * First run: the owner account and the first team, POSTed to /api/setup as
 * `{ name, email, password, team_name, setup_code }` (the code the server printed at start). The password rules are the server's; its `detail` is shown.
 */
export function SetupForm({ passwordMinLength }: { passwordMinLength: number }) {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [mismatch, setMismatch] = useState(false);
  const errorId = useId();
  const mismatchId = useId();
  const passwordHintId = useId();
  const codeHintId = useId();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending) return;
    const form = new FormData(event.currentTarget);
    const password = String(form.get("password") ?? "");
    if (password !== String(form.get("confirm") ?? "")) {
      setMismatch(true);
      setError(null);
      event.currentTarget.querySelector<HTMLInputElement>("#setup-confirm")?.focus();
      return;
    }
    setMismatch(false);
    setPending(true);
    setError(null);
    const result = await postJson("/api/setup", {
      name: String(form.get("name") ?? "").trim(),
      email: String(form.get("email") ?? "").trim(),
      password,
      team_name: String(form.get("team_name") ?? "").trim(),
      setup_code: String(form.get("setup_code") ?? "").trim(),
    });
    if (result.ok) {
      // Next step of the first run: connect an orkestr API.
      window.location.assign("/settings/connections");
      return;
    }
    setError(result.message);
    setPending(false);
  }

  return (
    // method="post": a submit before hydration must never put the password in the URL.
    <form
      method="post"
      onSubmit={onSubmit}
      aria-busy={pending}
      aria-describedby={error ? errorId : undefined}
      className="flex flex-col gap-4"
    >
      {error ? (
        <Alert variant="destructive" id={errorId}>
          <AlertDescription className="text-foreground">{error}</AlertDescription>
        </Alert>
      ) : null}
      <div className="flex flex-col gap-2">
        <Label htmlFor="setup-code">Setup code</Label>
        <Input
          id="setup-code"
          name="setup_code"
          autoComplete="off"
          spellCheck={false}
          required
          autoFocus
          aria-describedby={codeHintId}
          className="font-mono uppercase"
        />
        <p id={codeHintId} className="text-xs text-muted-foreground">
          The Baton server printed it in its log when it started; it is also in the file setup-code in its data
          directory.
        </p>
      </div>
      <fieldset className="flex flex-col gap-4">
        <legend className="mb-3 text-sm font-medium text-muted-foreground">Owner account</legend>
        <div className="flex flex-col gap-2">
          <Label htmlFor="setup-name">Name</Label>
          <Input id="setup-name" name="name" autoComplete="name" required />
        </div>
        <div className="flex flex-col gap-2">
          <Label htmlFor="setup-email">Email</Label>
          <Input id="setup-email" name="email" type="email" autoComplete="username" inputMode="email" required />
        </div>
        <div className="flex flex-col gap-2">
          <Label htmlFor="setup-password">Password</Label>
          <Input
            id="setup-password"
            name="password"
            type="password"
            autoComplete="new-password"
            required
            minLength={passwordMinLength}
            aria-describedby={passwordHintId}
          />
          <p id={passwordHintId} className="text-xs text-muted-foreground">
            At least {passwordMinLength} characters.
          </p>
        </div>
        <div className="flex flex-col gap-2">
          <Label htmlFor="setup-confirm">Confirm password</Label>
          <Input
            id="setup-confirm"
            name="confirm"
            type="password"
            autoComplete="new-password"
            required
            aria-invalid={mismatch || undefined}
            aria-describedby={mismatch ? mismatchId : undefined}
            onChange={() => mismatch && setMismatch(false)}
          />
          {mismatch ? (
            <p id={mismatchId} role="alert" className="text-sm text-destructive">
              The passwords do not match.
            </p>
          ) : null}
        </div>
      </fieldset>
      <fieldset className="flex flex-col gap-4">
        <legend className="mb-3 text-sm font-medium text-muted-foreground">First team</legend>
        <div className="flex flex-col gap-2">
          <Label htmlFor="setup-team">Team name</Label>
          <Input id="setup-team" name="team_name" autoComplete="organization" required />
        </div>
      </fieldset>
      <Button type="submit" aria-disabled={pending} className="mt-2 w-full">
        {pending ? "Creating account…" : "Create owner account"}
      </Button>
    </form>
  );
}
