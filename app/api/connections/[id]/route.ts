import { authorizeConnectionAction } from "../../../../lib/server/connection-access";
import { toConnectionDto } from "../../../../lib/server/connections";
import { route } from "../../../../lib/server/route";
import { removeConnection, replaceToken, setActive } from "../../../../lib/server/tokens";
import { ConnectionIdParams, UpdateConnectionBody } from "../../../../lib/validations/connections";

export const runtime = "nodejs";

// Connections are per user: the vault looks them up by (user, id), so another user's id is a 404.
// Each belongs to a team, and the role checked is the one in that team (lib/server/connection-access.ts):
// activating one picks the team the user acts in, so it needs membership there (a viewer of the
// team too); replacing its token or removing it needs connections.manage there.

// PATCH /api/connections/[id] – replace the token ({token}, checked before it is stored) and/or make it active ({active: true})
export const PATCH = route(
  { auth: "user", params: ConnectionIdParams, body: UpdateConnectionBody },
  async ({ user, current, params, body, audit }) => {
    if (body.token !== undefined) authorizeConnectionAction(current, params.id, "replace_token");
    if (body.active) authorizeConnectionAction(current, params.id, "activate");
    let view;
    if (body.token !== undefined) {
      view = (await replaceToken({ userId: user.id, connectionId: params.id, token: body.token })).connection;
      await audit("connection.token_replace", {
        target: view.id,
        data: { name: view.name, token_hint: view.tokenHint },
      });
    }
    if (body.active) {
      view = await setActive(user.id, params.id);
      await audit("connection.activate", { target: view.id, data: { name: view.name } });
    }
    return { connection: toConnectionDto(view!) };
  },
);

// DELETE /api/connections/[id] – remove it (its encrypted token goes with it); another one becomes active
export const DELETE = route({ auth: "user", params: ConnectionIdParams }, async ({ user, current, params, audit }) => {
  authorizeConnectionAction(current, params.id, "remove");
  const { active } = await removeConnection(user.id, params.id);
  await audit("connection.delete", { target: params.id });
  return { active: active ? toConnectionDto(active) : null };
});
