"use client";

import { authMutations } from "../../lib/queries/auth";
import { nextPathFromSearch } from "../../lib/safe-next-path";
import { Input } from "../ui/input";
import { Label } from "../ui/label";
import { AuthForm } from "./auth-form";

/** Email + password sign-in against POST /api/auth/login; shows the server's `detail` on failure. */
export function LoginForm() {
  return (
    <AuthForm
      send={(form) =>
        authMutations.login({
          email: String(form.get("email") ?? "").trim(),
          password: String(form.get("password") ?? ""),
        })
      }
      next={() => nextPathFromSearch(window.location.search, "/sandboxes")}
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
