"use client";

import { useId, useState } from "react";
import { authMutations } from "../../lib/queries/auth";
import { Input } from "../ui/input";
import { Label } from "../ui/label";
import { AuthForm } from "./auth-form";

/**
 * First run: the owner account and the first team, POSTed to /api/setup as
 * `{ name, email, password, team_name, setup_code }` (the code the server printed at start). The password rules are the server's; its `detail` is shown.
 */
export function SetupForm({ passwordMinLength }: { passwordMinLength: number }) {
  const [mismatch, setMismatch] = useState(false);
  const mismatchId = useId();
  const passwordHintId = useId();
  const codeHintId = useId();

  function send(form: FormData, element: HTMLFormElement) {
    const password = String(form.get("password") ?? "");
    if (password !== String(form.get("confirm") ?? "")) {
      setMismatch(true);
      element.querySelector<HTMLInputElement>("#setup-confirm")?.focus();
      return null;
    }
    setMismatch(false);
    return authMutations.setup({
      name: String(form.get("name") ?? "").trim(),
      email: String(form.get("email") ?? "").trim(),
      password,
      team_name: String(form.get("team_name") ?? "").trim(),
      setup_code: String(form.get("setup_code") ?? "").trim(),
    });
  }

  return (
    // Next step of the first run: connect an orkestr API.
    <AuthForm
      send={send}
      next={() => "/settings/connections"}
      submitLabel="Create owner account"
      pendingLabel="Creating account…"
    >
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
    </AuthForm>
  );
}
