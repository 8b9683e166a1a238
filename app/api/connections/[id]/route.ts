import { toConnectionDto } from "../../../../lib/server/connections";
import { route } from "../../../../lib/server/route";
import { removeConnection, replaceToken, setActive } from "../../../../lib/server/tokens";
import { ConnectionIdParams, UpdateConnectionBody } from "../../../../lib/validations/connections";

export const runtime = "nodejs";

// Connections are per user: the vault looks them up by (user, id), so another user's id is a 404.

// PATCH /api/connections/[id] – replace the token ({token}, checked before it is stored) and/or make it active ({active: true})
export const PATCH = route(
  { auth: "user", perm: "connections.manage", params: ConnectionIdParams, body: UpdateConnectionBody },
  async ({ user, params, body, audit }) => {
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
export const DELETE = route(
  { auth: "user", perm: "connections.manage", params: ConnectionIdParams },
  async ({ user, params, audit }) => {
    const { active } = await removeConnection(user.id, params.id);
    await audit("connection.delete", { target: params.id });
    return { active: active ? toConnectionDto(active) : null };
  },
);
