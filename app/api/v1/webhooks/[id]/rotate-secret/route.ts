import { refuseReceiverWebhook } from "../../../../../../lib/server/hooks/owned-webhooks";
import { route } from "../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { ResourceIdParams } from "../../../../../../lib/validations/proxy";

export const runtime = "nodejs";

// POST /api/v1/webhooks/[id]/rotate-secret – a new signing secret ({secret}), shown only here:
// Cache-Control: no-store (route()'s default), never stored or audited by Baton. 409
// webhook_owned_by_baton for Baton's own receiver, whose secret only Baton may hold
export const POST = route(
  { auth: "user", perm: "webhooks.write", params: ResourceIdParams },
  async ({ team, params, audit }) => {
    const res = await proxyJson(team, async (orkestr) => {
      await refuseReceiverWebhook(orkestr, params.id, "rotate");
      return orkestr.webhooks.rotateSecret(params.id);
    });
    await audit("webhook.rotate_secret", { target: params.id });
    return res;
  },
);
