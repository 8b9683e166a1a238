import { apiTokensView, createApiToken, toApiTokenDto } from "../../../lib/server/api-tokens/manage";
import { getMigratedDb } from "../../../lib/server/db/index";
import { json, route } from "../../../lib/server/route";
import { CreateApiTokenBody, type CreatedApiTokenDto } from "../../../lib/validations/api-tokens";

export const runtime = "nodejs";

// Personal API tokens of the acting team (issue 23). Cookie-only, as every console route outside
// /api/v1: a token can neither make nor revoke a token. Any member may make tokens (team.read), of
// the scopes their role allows; admins and owners see everyone's.

// GET /api/tokens – the member's tokens in the team (admins and owners: the whole team's, with owners).
export const GET = route({ auth: "user", perm: "team.read" }, async ({ team, user }) =>
  apiTokensView(await getMigratedDb(), team!, user),
);

// POST /api/tokens – makes a token: {name, scope, expires_in_days, spend_cap_micro?, max_concurrent_sandboxes?}; the token is in this answer only.
export const POST = route(
  { auth: "user", perm: "team.read", body: CreateApiTokenBody },
  async ({ team, user, body, audit }) => {
    const { token, apiToken } = await createApiToken(await getMigratedDb(), team!, {
      name: body.name,
      scope: body.scope,
      expiresInDays: body.expires_in_days,
      spendCapMicro: body.spend_cap_micro,
      maxConcurrent: body.max_concurrent_sandboxes,
    });
    await audit("api_token.create", {
      targetType: "api_token",
      targetId: apiToken.id,
      data: {
        name: apiToken.name,
        scope: apiToken.scope,
        hint: apiToken.hint,
        expires_at: apiToken.expiresAt?.toISOString() ?? null,
        spend_cap_micro: apiToken.spendCapMicro,
        max_concurrent_sandboxes: apiToken.maxConcurrent,
      },
    });
    const answer: CreatedApiTokenDto = {
      token,
      api_token: toApiTokenDto({ ...apiToken, owner: { id: user.id, name: user.name, email: user.email } }, user.id),
    };
    return json(answer, { status: 201 });
  },
);
