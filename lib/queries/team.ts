import { queryOptions } from "@tanstack/react-query";
import { apiJson, apiVoid } from "../api/core";
import { object } from "../api/read";
import { path } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type {
  InvitationDto,
  InvitationLookupDto,
  IssuedInvitationDto,
  MemberListDto,
  MyInvitationDto,
  Role,
  SessionDto,
} from "../validations/team";

// TanStack Query factories for Baton's /api/team (members, invitations), /api/me/invitations and
// the public /api/invitations. Mutations invalidate the ["team"] prefix.

export const teamKeys = {
  all: ["team"] as const,
  members: () => ["team", "members"] as const,
  invitations: () => ["team", "invitations"] as const,
  sessions: (userId: string) => ["team", "sessions", userId] as const,
  mine: () => ["team", "my-invitations"] as const,
};

const readMembers = object<MemberListDto>({ members: "array", team: "object", your_role: "string" });
const readInvitations = object<{ invitations: InvitationDto[] }>({ invitations: "array" });
const readMine = object<{ invitations: MyInvitationDto[] }>({ invitations: "array" });
const readSessions = object<{ sessions: Array<SessionDto & { current: boolean }> }>({ sessions: "array" });
const readIssued = object<IssuedInvitationDto>({ invitation: "object", link: "string", mailed: "boolean" });
const readLookup = object<InvitationLookupDto>({ state: "string", email: "string", role: "string", team: "object" });
const readAny = object<Record<string, unknown>>();
const readAccepted = object<{ team_id: string; role: Role; team_slug?: string | null }>(
  { team_id: "string", role: "string" },
  { team_slug: "string" },
);

const member = (userId: string, rest = "") => `${path`/api/team/members/${userId}`}${rest}`;
const invitation = (id: string, rest = "") => `${path`/api/team/invitations/${id}`}${rest}`;

export const teamQueries = {
  members: () =>
    queryOptions({
      queryKey: teamKeys.members(),
      queryFn: ({ signal }) => apiJson({ path: "/api/team/members", signal }, readMembers),
    }),
  invitations: () =>
    queryOptions({
      queryKey: teamKeys.invitations(),
      queryFn: ({ signal }) => apiJson({ path: "/api/team/invitations", signal }, readInvitations),
    }),
  sessions: (userId: string) =>
    queryOptions({
      queryKey: teamKeys.sessions(userId),
      queryFn: ({ signal }) => apiJson({ path: member(userId, "/sessions"), signal }, readSessions),
    }),
  mine: () =>
    queryOptions({
      queryKey: teamKeys.mine(),
      queryFn: ({ signal }) => apiJson({ path: "/api/me/invitations", signal }, readMine),
    }),
};

export const teamMutations = {
  changeRole: (userId: string, role: Role) =>
    apiJson({ method: "PATCH", path: member(userId), body: { role } }, readAny),
  remove: (userId: string) => apiJson({ method: "DELETE", path: member(userId) }, readAny),
  disable: (userId: string) => apiJson({ method: "POST", path: member(userId, "/disable") }, readAny),
  enable: (userId: string) => apiJson({ method: "POST", path: member(userId, "/enable") }, readAny),
  unlock: (userId: string) => apiJson({ method: "POST", path: member(userId, "/unlock") }, readAny),
  revokeSession: (userId: string, sessionId: string) =>
    apiVoid({ method: "DELETE", path: `${member(userId)}${path`/sessions/${sessionId}`}` }),
  transferOwnership: (userId: string, stayOwner = false) =>
    apiJson(
      { method: "POST", path: "/api/team/transfer-ownership", body: { user_id: userId, stay_owner: stayOwner } },
      readAny,
    ),
  leave: (teamId: string) => apiJson({ method: "POST", path: "/api/team/leave", body: { team_id: teamId } }, readAny),
  invite: (email: string, role: Role) =>
    apiJson({ method: "POST", path: "/api/team/invitations", body: { email, role } }, readIssued),
  resend: (id: string) => apiJson({ method: "POST", path: invitation(id, "/resend") }, readIssued),
  revoke: (id: string) => apiJson({ method: "DELETE", path: invitation(id) }, readAny),
  acceptMine: (id: string) =>
    apiJson({ method: "POST", path: `${path`/api/me/invitations/${id}`}/accept` }, readAccepted),
  declineMine: (id: string) => apiVoid({ method: "POST", path: `${path`/api/me/invitations/${id}`}/decline` }),
  lookup: (token: string) => apiJson({ method: "POST", path: "/api/invitations/lookup", body: { token } }, readLookup),
  accept: (body: { token: string; name?: string; password?: string }) =>
    apiJson({ method: "POST", path: "/api/invitations/accept", body }, readAccepted),
};
