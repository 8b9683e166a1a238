import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { LoginForm } from "../../../components/auth/login-form";
import { Card, CardContent, CardDescription, CardHeader } from "../../../components/ui/card";
import { getCurrentUser, safeNextPath } from "../../../lib/server/auth";
import { getMigratedDb } from "../../../lib/server/db/index";
import { isFirstRun } from "../../../lib/server/db/setup";
import { SsoSignIn } from "../../../components/auth/sso-sign-in";
import { anyTeamHasSso, getSsoConfig } from "../../../lib/server/db/sso";
import { findTeamBySlug } from "../../../lib/server/db/teams";
import { isSsoErrorCode, ssoMessage } from "../../../lib/sso-messages";

export const metadata: Metadata = { title: "Sign in" };

export default async function LoginPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  // First run: there is nobody to sign in yet.
  const db = await getMigratedDb();
  if (await isFirstRun(db)) redirect("/setup");
  // Already signed in: straight on to where the visitor was going.
  if (await getCurrentUser()) {
    const next = (await searchParams).next;
    redirect(safeNextPath(typeof next === "string" ? next : null) ?? "/sandboxes");
  }
  // "Sign in with SSO" is offered once a team has configured it (a laptop install never shows it).
  // An SSO sign-in that came back refused: the code from the callback, worded here; the issuer
  // named in it is read from the team's settings, never from the URL.
  const params = await searchParams;
  const code = params.sso_error;
  let ssoError: string | null = null;
  if (isSsoErrorCode(code)) {
    const team = typeof params.sso_team === "string" ? await findTeamBySlug(db, params.sso_team) : null;
    const issuer = team ? ((await getSsoConfig(db, team.id))?.issuer ?? null) : null;
    ssoError = ssoMessage(code, { issuer });
  }
  return (
    <Card>
      <CardHeader>
        <h1 className="text-xl font-semibold tracking-tight">Sign in</h1>
        <CardDescription>Sign in to your Baton console.</CardDescription>
      </CardHeader>
      <CardContent>
        <LoginForm />
        {ssoError || (await anyTeamHasSso(db)) ? (
          <>
            <div className="my-6 flex items-center gap-3 text-xs text-muted-foreground" aria-hidden="true">
              <span className="h-px flex-1 bg-border" />
              or
              <span className="h-px flex-1 bg-border" />
            </div>
            <SsoSignIn error={ssoError} />
          </>
        ) : null}
      </CardContent>
    </Card>
  );
}
