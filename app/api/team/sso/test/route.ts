import { getMigratedDb } from "../../../../../lib/server/db/index";
import { AppError } from "../../../../../lib/server/errors";
import { route } from "../../../../../lib/server/route";
import { SsoFailure, startSsoSignIn } from "../../../../../lib/server/sso/flow";
import { recordSsoTest } from "../../../../../lib/server/db/sso";

export const runtime = "nodejs";

// POST /api/team/sso/test – starts a test sign-in with the saved settings: the answer's `url` is the
// IdP's sign-in page to open. The callback records what the IdP said (GET /api/team/sso/test-result)
// and signs nobody in, adds nobody and enforces nothing.
export const POST = route({ auth: "user", perm: "team.manage" }, async ({ req, user, team }) => {
  const db = await getMigratedDb();
  try {
    const url = await startSsoSignIn(db, {
      teamId: team!.team.id,
      purpose: "test",
      headers: req.headers,
      userId: user.id,
    });
    return { url: url.href };
  } catch (err) {
    if (!(err instanceof SsoFailure)) throw err;
    if (err.code === "sso_not_configured") throw new AppError("not_found", err.detail);
    await recordSsoTest(db, team!.team.id, { ok: false, at: Date.now(), code: err.code, detail: err.detail });
    throw new AppError("bad_gateway", err.detail);
  }
});
