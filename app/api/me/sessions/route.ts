import { ownSessions } from "../../../../lib/server/account";
import { getMigratedDb } from "../../../../lib/server/db/index";
import { route } from "../../../../lib/server/route";

export const runtime = "nodejs";

// GET /api/me/sessions – the user's live sessions (this browser's marked `current`), most recently
// used first. The id is the row's (sha256 of the cookie's token): it can end a session, not make one.
export const GET = route({ auth: "user" }, async ({ current }) => ({
  sessions: await ownSessions(await getMigratedDb(), current),
}));
