// Who created a sandbox through Baton: POST /api/v1/sandboxes stamps its metadata with the user's
// and the team's ids (lib/server/creator-stamp.ts), and the list filters on it
// (`/sandboxes?creator=<userId>` → `metadata[baton.user]=<userId>` on the orkestr list call).
// Keys under `baton.` are Baton's: a client that sends one gets 422 reserved_metadata, on create
// and on PATCH, and a PATCH keeps the stored stamp. Pure: the server and the browser share it.

/** The prefix of Baton's own metadata keys. */
export const RESERVED_METADATA_PREFIX = "baton.";
/** The creating user's id. */
export const CREATOR_USER_KEY = "baton.user";
/** The team the sandbox was created in. */
export const CREATOR_TEAM_KEY = "baton.team";
/** How a sandbox not made in the browser was made: "token" (an API token: the SDK, curl) or "mcp". */
export const CREATOR_VIA_KEY = "baton.via";
/** The id of the API token it was made with (its name is looked up in the team's tokens: it may change hands, never ids). */
export const CREATOR_TOKEN_KEY = "baton.token";
/** How many of a sandbox's metadata keys (the API allows 50) the stamp takes at most. */
export const CREATOR_STAMP_KEYS = 4;

/** The channel a sandbox was made through when not the browser's session. */
export type CreatorChannel = "token" | "mcp";
/** A stamp's `via`: the channel and the token that was used (MCP is authenticated with a token too). */
export interface CreatorVia {
  channel: CreatorChannel;
  tokenId: string;
}

export function isReservedMetadataKey(key: string): boolean {
  return key.toLowerCase().startsWith(RESERVED_METADATA_PREFIX);
}

/** The keys of `metadata` that only Baton may set, in order. */
export function reservedKeysIn(metadata: Readonly<Record<string, unknown>> | null | undefined): string[] {
  return Object.keys(metadata ?? {}).filter(isReservedMetadataKey);
}

/** Baton's stamp in a sandbox's metadata (only string values count). */
export function stampOf(metadata: Readonly<Record<string, unknown>> | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(metadata ?? {}))
    if (isReservedMetadataKey(k) && typeof v === "string") out[k] = v;
  return out;
}

/** The metadata a user may edit: everything but Baton's stamp. */
export function userMetadata<T>(metadata: Readonly<Record<string, T>> | null | undefined): Record<string, T> {
  return Object.fromEntries(Object.entries(metadata ?? {}).filter(([k]) => !isReservedMetadataKey(k)));
}

/** The metadata a sandbox created by `userId` in `teamId` is stored with: the client's plus the stamp. */
export function withCreatorStamp(
  metadata: Readonly<Record<string, string>> | null | undefined,
  creator: { userId: string; teamId: string; via?: CreatorVia | null },
): Record<string, string> {
  const stamp: Record<string, string> = { [CREATOR_USER_KEY]: creator.userId, [CREATOR_TEAM_KEY]: creator.teamId };
  if (creator.via) {
    stamp[CREATOR_VIA_KEY] = creator.via.channel;
    stamp[CREATOR_TOKEN_KEY] = creator.via.tokenId;
  }
  return { ...userMetadata(metadata), ...stamp };
}

/** How a sandbox was made, from its stamp: null for the browser (or no stamp). */
export function creatorViaOf(metadata: Readonly<Record<string, unknown>> | null | undefined): CreatorVia | null {
  const channel = metadata?.[CREATOR_VIA_KEY];
  const tokenId = metadata?.[CREATOR_TOKEN_KEY];
  if ((channel !== "token" && channel !== "mcp") || typeof tokenId !== "string" || !tokenId) return null;
  return { channel, tokenId };
}

/** "via API token <name>" / "via MCP (<name>)"; `tokenName` null when the team has no such token. */
export function creatorViaText(via: CreatorVia, tokenName: string | null): string {
  const name = tokenName ?? "an unknown token";
  return via.channel === "mcp" ? `via MCP (${name})` : `via API token ${name}`;
}

/** The user id that created a sandbox through Baton, or null (created elsewhere, or before the stamp). */
export function creatorOf(metadata: Readonly<Record<string, unknown>> | null | undefined): string | null {
  const v = metadata?.[CREATOR_USER_KEY];
  return typeof v === "string" && v ? v : null;
}

/** The list's metadata filter for "created by `userId`". */
export function creatorFilter(userId: string): [key: string, value: string] {
  return [CREATOR_USER_KEY, userId];
}

/** The sandbox list filtered by creator: what the members page links to. */
export function sandboxesByCreatorHref(userId: string): string {
  return `/sandboxes?${new URLSearchParams({ creator: userId }).toString()}`;
}

/** Why a client's metadata is refused, or null: one sentence naming the keys. */
export function reservedMetadataProblem(metadata: Readonly<Record<string, unknown>> | null | undefined): string | null {
  const keys = reservedKeysIn(metadata);
  if (!keys.length) return null;
  const list = keys.map((k) => `"${k}"`).join(", ");
  return (
    `Metadata keys starting with "${RESERVED_METADATA_PREFIX}" are Baton's own (it records who created the sandbox ` +
    `there): remove ${list}.`
  );
}

/** Who the list's "Created · by" column names, and how it came to that answer. */
export interface CreatorName {
  /** "you" (the viewer), a current "member", a "former" one (no longer in the team), or "outside" Baton. */
  kind: "you" | "member" | "former" | "outside";
  text: string;
  /** How it was made when not in the browser: "via API token <name>" or "via MCP (<name>)"; else null. */
  via: string | null;
}

/**
 * The "Created by" of a sandbox for the viewer `viewerId`, given the team's members (user id →
 * name, from the server). No stamp: made outside Baton (SDK, curl) or before the stamp existed.
 */
export function creatorName(
  metadata: Readonly<Record<string, unknown>> | null | undefined,
  viewerId: string | null | undefined,
  members: Readonly<Record<string, string>>,
  tokens: Readonly<Record<string, string>> = {},
): CreatorName {
  const id = creatorOf(metadata);
  if (id === null) return { kind: "outside", text: "outside Baton", via: null };
  const made = creatorViaOf(metadata);
  const via = made ? creatorViaText(made, Object.hasOwn(tokens, made.tokenId) ? tokens[made.tokenId]! : null) : null;
  if (viewerId && id === viewerId) return { kind: "you", text: "You", via };
  const name = Object.hasOwn(members, id) ? members[id] : undefined;
  return name ? { kind: "member", text: name, via } : { kind: "former", text: "Former member", via };
}
