import { connectionList, toConnectionDto } from "../../../lib/server/connections";
import { json, route } from "../../../lib/server/route";
import { saveConnection } from "../../../lib/server/tokens";
import { CreateConnectionBody } from "../../../lib/validations/connections";

export const runtime = "nodejs";

// Tokens come in here and never go out: every answer is a DTO with the hint only, and the audit
// rows name the connection, its base URL and hint.

// GET /api/connections – the user's orkestr connections of the acting team (hints only) and the local engine's availability
export const GET = route({ auth: "user" }, async ({ current, team }) => connectionList(current, team));

// POST /api/connections – add one: format, SSRF and a live limits check first, stored only when all pass
export const POST = route(
  { auth: "user", perm: "connections.manage", body: CreateConnectionBody },
  async ({ user, team, body, audit }) => {
    const saved = await saveConnection({
      userId: user.id,
      teamId: team?.team.id ?? null,
      name: body.name,
      baseUrl: body.base_url,
      token: body.token,
      activate: body.activate,
    });
    const connection = toConnectionDto(saved.connection);
    await audit("connection.create", {
      target: connection.id,
      data: { name: connection.name, base_url: connection.base_url, token_hint: connection.token_hint },
    });
    return json(
      {
        connection,
        check: { plan: saved.check.plan, latency_ms: saved.check.latencyMs, warning: saved.check.warning ?? null },
      },
      { status: 201 },
    );
  },
);
