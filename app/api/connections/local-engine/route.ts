import { toConnectionDto } from "../../../../lib/server/connections";
import { json, route } from "../../../../lib/server/route";
import { connectLocalEngine } from "../../../../lib/server/tokens";

export const runtime = "nodejs";

// POST /api/connections/local-engine – "Use the local engine": mint a token with the engine's bootstrap secret, check it, save it as active
export const POST = route({ auth: "user", perm: "connections.manage" }, async ({ user, team, audit }) => {
  const saved = await connectLocalEngine(user.id, { teamId: team?.team.id ?? null, label: user.email });
  const connection = toConnectionDto(saved.connection);
  await audit("connection.local_engine", {
    target: connection.id,
    data: { name: connection.name, base_url: connection.base_url, token_hint: connection.token_hint },
  });
  return json({ connection }, { status: 201 });
});
