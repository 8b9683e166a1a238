import { connectionStatus } from "../../../../lib/server/connections";
import { route } from "../../../../lib/server/route";

export const runtime = "nodejs";

// GET /api/connections/status – the connection requests act through (the acting team's: name, host,
// hint) and a live check of it, for the header indicator
export const GET = route({ auth: "user" }, async ({ team }) => connectionStatus(team));
