import { CreateTemplateBody } from "../../../../lib/orkestr/schemas/templates";
import { getMigratedDb } from "../../../../lib/server/db/index";
import { json, route } from "../../../../lib/server/route";
import { assertUnderCaps } from "../../../../lib/server/usage/cap-check";
import { idempotencyFrom, proxyPage, withUpstream } from "../../../../lib/server/upstream";
import { ProxyListTemplatesQuery } from "../../../../lib/validations/proxy";

export const runtime = "nodejs";

// GET /api/v1/templates?include_builtin= – one page of custom templates (and the built-ins when asked)
export const GET = route(
  { auth: "user", perm: "templates.read", query: ProxyListTemplatesQuery },
  async ({ team, query }) => proxyPage(team, (orkestr) => orkestr.templates.list(query)),
);

// POST /api/v1/templates – start a build ({name, base_image, steps, env?}); 202 with status "building"
export const POST = route(
  { auth: "user", perm: "templates.write", body: CreateTemplateBody },
  async ({ req, team, body, audit }) => {
    await assertUnderCaps(await getMigratedDb(), team!, "build a template");
    const template = await withUpstream(team, (orkestr) => orkestr.templates.create(body, idempotencyFrom(req)));
    await audit("template.create", { target: template.id, data: { name: body.name, base_image: body.base_image } });
    return json(template, { status: 202 });
  },
);
