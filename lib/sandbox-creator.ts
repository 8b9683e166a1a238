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
/** The personal API token it was created with (its id), when it was (lib/server/api-tokens/limits.ts). */
export const CREATOR_TOKEN_KEY = "baton.token";
/** How many of a sandbox's metadata keys (the API allows 50) the stamp takes. */
export const CREATOR_STAMP_KEYS = 2;

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
  creator: { userId: string; teamId: string; tokenId?: string | null },
): Record<string, string> {
  const stamp = { ...userMetadata(metadata), [CREATOR_USER_KEY]: creator.userId, [CREATOR_TEAM_KEY]: creator.teamId };
  return creator.tokenId ? { ...stamp, [CREATOR_TOKEN_KEY]: creator.tokenId } : stamp;
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
}

/**
 * The "Created by" of a sandbox for the viewer `viewerId`, given the team's members (user id →
 * name, from the server). No stamp: made outside Baton (SDK, curl) or before the stamp existed.
 */
export function creatorName(
  metadata: Readonly<Record<string, unknown>> | null | undefined,
  viewerId: string | null | undefined,
  members: Readonly<Record<string, string>>,
): CreatorName {
  const id = creatorOf(metadata);
  if (id === null) return { kind: "outside", text: "outside Baton" };
  if (viewerId && id === viewerId) return { kind: "you", text: "You" };
  const name = Object.hasOwn(members, id) ? members[id] : undefined;
  return name ? { kind: "member", text: name } : { kind: "former", text: "Former member" };
}
