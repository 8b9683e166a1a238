import { protectedResourceMetadata } from "../../../../../lib/server/mcp/metadata";
import { route } from "../../../../../lib/server/route";

export const runtime = "nodejs";

// GET /.well-known/oauth-protected-resource/api/mcp – RFC 9728 metadata of Baton's MCP endpoint (public: it names no secret)
export const GET = route({ auth: "public" }, ({ req }) => protectedResourceMetadata(req.headers));
