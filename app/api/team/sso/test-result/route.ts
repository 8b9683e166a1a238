import { getMigratedDb } from "../../../../../lib/server/db/index";
import { getSsoConfig } from "../../../../../lib/server/db/sso";
import { route } from "../../../../../lib/server/route";

export const runtime = "nodejs";

// GET /api/team/sso/test-result – the last test sign-in's outcome and when the last one succeeded.
export const GET = route({ auth: "user", perm: "team.manage" }, async ({ team }) => {
  const config = await getSsoConfig(await getMigratedDb(), team!.team.id);
  return { tested_at: config?.testedAt ?? null, last_test: config?.lastTest ?? null };
});
