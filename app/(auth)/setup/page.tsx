import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { SetupForm } from "../../../components/auth/setup-form";
import { Card, CardContent, CardDescription, CardHeader } from "../../../components/ui/card";
import { getCurrentUser } from "../../../lib/server/auth";
import { getMigratedDb } from "../../../lib/server/db/index";
import { isFirstRun } from "../../../lib/server/db/setup";
import { getEnv } from "../../../lib/server/env";
import { ensureSetupCode } from "../../../lib/server/setup-code";
import { PASSWORD_MIN_LENGTH } from "../../../lib/validations/auth";

export const metadata: Metadata = { title: "Set up Baton" };

export default async function SetupPage() {
  // The first-run page exists only until the owner account does.
  const db = await getMigratedDb();
  if (!(await isFirstRun(db))) redirect((await getCurrentUser()) ? "/sandboxes" : "/login");
  // The code the form asks for: created and printed in the server's log now if the server did not
  // at start (`next dev`). Never shown here.
  await ensureSetupCode(db, getEnv().BATON_DATA_DIR);
  return (
    <Card>
      <CardHeader>
        <h1 className="text-xl font-semibold tracking-tight">Set up Baton</h1>
        <CardDescription>
          Create the owner account and the first team, with the setup code from the server&apos;s log.
        </CardDescription>
      </CardHeader>
      <CardContent>
        <SetupForm passwordMinLength={PASSWORD_MIN_LENGTH} />
      </CardContent>
    </Card>
  );
}
