import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { LoginForm } from "../../../components/auth/login-form";
import { Card, CardContent, CardDescription, CardHeader } from "../../../components/ui/card";
import { getCurrentUser, safeNextPath } from "../../../lib/server/auth";
import { getMigratedDb } from "../../../lib/server/db/index";
import { isFirstRun } from "../../../lib/server/db/setup";

export const metadata: Metadata = { title: "Sign in" };

export default async function LoginPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  // First run: there is nobody to sign in yet.
  if (await isFirstRun(await getMigratedDb())) redirect("/setup");
  // Already signed in: straight on to where the visitor was going.
  if (await getCurrentUser()) {
    const next = (await searchParams).next;
    redirect(safeNextPath(typeof next === "string" ? next : null) ?? "/sandboxes");
  }
  return (
    <Card>
      <CardHeader>
        <h1 className="text-xl font-semibold tracking-tight">Sign in</h1>
        <CardDescription>Sign in to your Baton console.</CardDescription>
      </CardHeader>
      <CardContent>
        <LoginForm />
      </CardContent>
    </Card>
  );
}
