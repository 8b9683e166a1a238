"use client";

import { useState } from "react";
import { signInSteps } from "../../lib/queries/account";
import { nextPathFromSearch } from "../../lib/safe-next-path";
import { Button } from "../ui/button";
import { Input } from "../ui/input";
import { Label } from "../ui/label";
import { AuthForm } from "./auth-form";

const nextPath = () => nextPathFromSearch(window.location.search, "/sandboxes");

/**
 * Email + password sign-in against POST /api/auth/login; shows the server's `detail` on failure.
 * An account with two-factor authentication then asks for a code (or a recovery code), sent to
 * POST /api/auth/login/second-factor with the pending cookie the first step set.
 */
export function LoginForm() {
  const [step, setStep] = useState<"password" | "code">("password");

  if (step === "code")
    return (
      <div className="flex flex-col gap-4">
        <p className="text-sm text-muted-foreground" id="login-code-hint">
          Enter the 6-digit code from your authenticator app, or one of your recovery codes.
        </p>
        <AuthForm
          send={(form) => signInSteps.code(String(form.get("code") ?? "").trim())}
          next={nextPath}
          submitLabel="Verify"
          pendingLabel="Verifying…"
        >
          <div className="flex flex-col gap-2">
            <Label htmlFor="login-code">Code</Label>
            <Input
              id="login-code"
              name="code"
              autoComplete="one-time-code"
              autoCapitalize="none"
              spellCheck={false}
              maxLength={32}
              required
              autoFocus
              aria-describedby="login-code-hint"
              className="font-mono tracking-wider"
            />
          </div>
        </AuthForm>
        <Button variant="link" className="self-start px-0" onClick={() => setStep("password")}>
          Back to email and password
        </Button>
      </div>
    );

  return (
    <AuthForm
      send={(form) =>
        signInSteps.password({
          email: String(form.get("email") ?? "").trim(),
          password: String(form.get("password") ?? ""),
        })
      }
      proceed={(answer) => {
        if ((answer as { second_factor_required?: boolean } | undefined)?.second_factor_required) {
          setStep("code");
          return false;
        }
        return true;
      }}
      next={nextPath}
      submitLabel="Sign in"
      pendingLabel="Signing in…"
    >
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
    </AuthForm>
  );
}
