"use client";

import { useId, useState, type FormEvent } from "react";
import { Alert, AlertDescription } from "../ui/alert";
import { Button } from "../ui/button";
import { Input } from "../ui/input";
import { Label } from "../ui/label";
import { nextPathFromSearch, postJson } from "./post-json";

/** Email + password sign-in against POST /api/auth/login; shows the server's `detail` on failure. */
export function LoginForm() {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const errorId = useId();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending) return;
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(null);
    const result = await postJson("/api/auth/login", {
      email: String(form.get("email") ?? "").trim(),
      password: String(form.get("password") ?? ""),
    });
    if (result.ok) {
      // A full navigation so the next page is rendered with the new session cookie.
      window.location.assign(nextPathFromSearch(window.location.search, "/sandboxes"));
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
        <Label htmlFor="login-email">Email</Label>
        <Input
          id="login-email"
          name="email"
          type="email"
          autoComplete="username"
          inputMode="email"
          required
          autoFocus
        />
      </div>
      <div className="flex flex-col gap-2">
        <Label htmlFor="login-password">Password</Label>
        <Input id="login-password" name="password" type="password" autoComplete="current-password" required />
      </div>
      <Button type="submit" aria-disabled={pending} className="mt-2 w-full">
        {pending ? "Signing in…" : "Sign in"}
      </Button>
    </form>
  );
}
