import "server-only";
import type { CreateSandboxBody, UpdateSandboxBody } from "../orkestr/schemas/sandboxes";
import {
  reservedMetadataProblem,
  stampOf,
  withCreatorStamp,
  type CreatorChannel,
  type CreatorVia,
} from "../sandbox-creator";
import type { ActingTeam } from "./acting-team";
import type { CurrentUser } from "./auth";
import { AppError } from "./errors";
import { withUpstream } from "./upstream";

// The creator stamp (lib/sandbox-creator.ts) on the way to the orkestr API: every sandbox created
// through Baton (create, fork: both are POST /api/v1/sandboxes) carries `baton.user` and
// `baton.team`, so the team can see who made what (the members page's counts, the list's
// `?creator=`). A client may not write those keys (422 reserved_metadata), and a PATCH that
// replaces the metadata keeps them.

/** 422 reserved_metadata when the client sent any `baton.*` key. */
export function refuseReservedMetadata(metadata: Readonly<Record<string, unknown>> | null | undefined): void {
  const problem = reservedMetadataProblem(metadata);
  if (problem) throw new AppError("reserved_metadata", problem);
}

/**
 * How a request makes a sandbox, for its stamp: null with a session (the browser); with an API token,
 * the token and the channel, "token" unless the request was marked otherwise (the MCP endpoint
 * passes `viaOf(req)`, "mcp", so its sandboxes say `baton.via=mcp`).
 */
export function creatorVia(current: CurrentUser | null, mark: CreatorChannel | null = null): CreatorVia | null {
  if (current?.via.kind !== "token") return null;
  return { channel: mark ?? "token", tokenId: current.via.tokenId };
}

/** The create (or fork) body as sent upstream: the client's metadata plus the stamp. */
export function stampCreate<B extends Pick<CreateSandboxBody, "metadata">>(
  body: B,
  team: ActingTeam,
  via: CreatorVia | null = null,
): B {
  refuseReservedMetadata(body.metadata);
  return { ...body, metadata: withCreatorStamp(body.metadata, { userId: team.userId, teamId: team.team.id, via }) };
}

/**
 * The PATCH body as sent upstream. The upstream replaces the whole metadata map, so one that
 * changes the metadata gets the sandbox's stored stamp back in (read first, with the same
 * connection); a body without metadata leaves it alone and needs no read.
 */
export async function keepStampOnPatch<B extends Pick<UpdateSandboxBody, "metadata">>(
  body: B,
  team: ActingTeam,
  sandboxId: string,
): Promise<B> {
  refuseReservedMetadata(body.metadata);
  if (body.metadata === undefined) return body;
  const stored = await withUpstream(team, (orkestr) => orkestr.sandboxes.get(sandboxId));
  return { ...body, metadata: { ...body.metadata, ...stampOf(stored.metadata) } };
}
