import { route } from "../../../../../../lib/server/route";
import { proxyJson } from "../../../../../../lib/server/upstream";
import { SandboxIdParams } from "../../../../../../lib/validations/proxy";
import { OpenPtyRequest } from "../../../../../../lib/validations/pty";

export const runtime = "nodejs";

// Interactive terminals (the engine's PTY extension, advertised as limits.capabilities.pty). The
// byte stream itself is a WebSocket at …/pty/{pid}/ws, served by the relay in scripts/console-server.mjs.

// GET /api/v1/sandboxes/[id]/pty – the sandbox's terminal sessions (exited ones linger a minute)
export const GET = route({ auth: "user", perm: "sandboxes.read", params: SandboxIdParams }, async ({ team, params }) =>
  proxyJson(team, (orkestr) => orkestr.pty.list(params.id)),
);

// POST /api/v1/sandboxes/[id]/pty – start a terminal session (201)
export const POST = route(
  { auth: "user", perm: "sandboxes.write", params: SandboxIdParams, body: OpenPtyRequest, optionalBody: true },
  async ({ team, params, body, audit }) => {
    const res = await proxyJson(team, (orkestr) => orkestr.pty.open(params.id, body), { status: 201 });
    await audit("sandbox.terminal_open", { target: params.id });
    return res;
  },
);
