import { hashPassword } from "../../../lib/server/crypto";
import { getMigratedDb } from "../../../lib/server/db/index";
import { createFirstOwner, isFirstRun } from "../../../lib/server/db/setup";
import { slugify } from "../../../lib/server/db/teams";
import { getEnv } from "../../../lib/server/env";
import { AppError } from "../../../lib/server/errors";
import { signInThroughNextAuth } from "../../../lib/server/next-auth";
import { route } from "../../../lib/server/route";
import { checkSetupCode, clearSetupCode, ensureSetupCode } from "../../../lib/server/setup-code";
import { signInError } from "../../../lib/server/sign-in";
import { SetupBody } from "../../../lib/validations/auth";

export const runtime = "nodejs";

// POST /api/setup – first run: create the owner account and the first team, then sign the owner in.
// Only while Baton has no user: afterwards 409 already_set_up (a concurrent second setup too). It
// needs the setup code the server printed at start (403 bad_setup_code), so that reaching Baton
// first is not enough to own it.
export const POST = route({ auth: "public", body: SetupBody }, async ({ req, body, audit }) => {
  const db = await getMigratedDb();
  if (!(await isFirstRun(db))) throw new AppError("already_set_up", "Baton is already set up. Sign in instead.");
  const { BATON_DATA_DIR } = getEnv();
  await ensureSetupCode(db, BATON_DATA_DIR);
  if (!(await checkSetupCode(db, body.setup_code))) {
    throw new AppError(
      "bad_setup_code",
      "That is not the setup code. The Baton server printed it in its log when it started; it is also in the file setup-code in its data directory.",
      {
        errors: { setup_code: "is not the code the server printed" },
      },
    );
  }
  const passwordHash = await hashPassword(body.password);
  const { user, team } = await createFirstOwner(db, {
    email: body.email,
    name: body.name,
    passwordHash,
    teamName: body.team_name,
    teamSlug: slugify(body.team_name),
  });
  await audit("auth.setup", { userId: user.id, teamId: team.id, target: team.id, data: { team_slug: team.slug } });
  await clearSetupCode(db, BATON_DATA_DIR);

  const { outcome, setCookies } = await signInThroughNextAuth(req, { email: body.email, password: body.password });
  if (!outcome.ok) throw signInError(outcome);
  const headers = new Headers({ "content-type": "application/json" });
  for (const cookie of setCookies) headers.append("set-cookie", cookie);
  return new Response(
    JSON.stringify({
      user: { id: user.id, name: user.name, email: user.email },
      team: { id: team.id, name: team.name, slug: team.slug },
    }),
    { status: 201, headers },
  );
});
