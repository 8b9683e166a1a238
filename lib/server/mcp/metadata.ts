import "server-only";
import { publicOrigin } from "../sso/flow";

// The MCP authorization spec's discovery, as far as it applies to Baton: the endpoint is an OAuth
// protected resource (RFC 9728) whose bearer tokens are Baton's personal API tokens, made by a person
// in Settings → API tokens. Baton runs no OAuth authorization server, so the metadata names none
// and a client cannot obtain a token by itself (the README says so).

export const MCP_PATH = "/api/mcp";
export const RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_PATH}`;

export function mcpResource(headers: Headers): string {
  return `${publicOrigin(headers)}${MCP_PATH}`;
}

export function protectedResourceMetadata(headers: Headers) {
  const origin = publicOrigin(headers);
  return {
    resource: `${origin}${MCP_PATH}`,
    resource_name: "Baton",
    bearer_methods_supported: ["header"],
    resource_documentation: `${origin}/settings/tokens`,
  };
}

/** The 401's challenge: where the metadata is, and what was wrong (RFC 6750 §3). */
export function bearerChallenge(headers: Headers, error?: "invalid_token", description?: string): string {
  const parts = [`Bearer realm="Baton"`, `resource_metadata="${publicOrigin(headers)}${RESOURCE_METADATA_PATH}"`];
  if (error) parts.push(`error="${error}"`);
  if (description) parts.push(`error_description="${description.replace(/["\\]/g, "")}"`);
  return parts.join(", ");
}
