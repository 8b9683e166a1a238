import { hashPassword } from "../../../lib/server/crypto";
import { getMigratedDb } from "../../../lib/server/db/index";
import { createFirstOwner, isFirstRun } from "../../../lib/server/db/setup";
import { slugify } from "../../../lib/server/db/teams";
import { getEnv } from "../../../lib/server/env";
import { AppError } from "../../../lib/server/errors";
import { signInThroughNextAuth } from "../../../lib/server/next-auth";
import { route } from "../../../lib/server/route";
import { attemptSetupCode, setupCodeError } from "../../../lib/server/setup-attempts";
import { clearSetupCode, ensureSetupCode } from "../../../lib/server/setup-code";
import { signInError } from "../../../lib/server/sign-in";
import { SetupBody } from "../../../lib/validations/auth";

export const runtime = "nodejs";

// POST /api/setup – first run: create the owner account and the first team, then sign the owner in.
// Only while Baton has no user: afterwards 409 already_set_up (a concurrent second setup too). It
// needs the setup code the server printed at start (403 bad_setup_code), so that reaching Baton
// first is not enough to own it; wrong codes are limited per client address as failed sign-ins are
// (lib/server/setup-attempts.ts: 429 rate_limited with Retry-After).
export const POST = route({ auth: "public", body: SetupBody }, async ({ req, body, ip, audit }) => {
  const db = await getMigratedDb();
  if (!(await isFirstRun(db))) throw new AppError("already_set_up", "Baton is already set up. Sign in instead.");
  const { BATON_DATA_DIR } = getEnv();
  await ensureSetupCode(db, BATON_DATA_DIR);
  const attempt = await attemptSetupCode(db, { code: body.setup_code, ip });
  if (!attempt.ok) throw setupCodeError(attempt);
  const passwordHash = await hashPassword(body.password);
  const { user, team } = await createFirstOwner(db, {
    email: body.email,
    name: body.name,
    passwordHash,
    teamName: body.team_name,
    teamSlug: slugify(body.team_name),
  });
  await audit("auth.setup", {
    userId: user.id,
    teamId: team.id,
    targetType: "team",
    targetId: team.id,
    data: { team_slug: team.slug },
  });
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
