import { queryOptions } from "@tanstack/react-query";
import { apiJson } from "../api/core";
import { object } from "../api/read";
import { path } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { SecurityDto, SessionDto, TeamDto, TotpEnrolmentDto } from "../validations/account";

// "Your account" (/settings) and the team's settings (/settings/team), through the browser core.

export const accountKeys = {
  all: ["account"] as const,
  security: () => ["account", "security"] as const,
  sessions: () => ["account", "sessions"] as const,
  team: () => ["team", "settings"] as const,
};

const readSecurity = object<SecurityDto>({ has_password: "boolean", totp: "object", sessions: "number" });
const readSessions = object<{ sessions: SessionDto[] }>({ sessions: "array" });
const readEnrolment = object<TotpEnrolmentDto>({ secret: "string", otpauth_uri: "string", qr_data_url: "string" });
const readCodes = object<{ recovery_codes: string[] }>({ recovery_codes: "array" });
const readUser = object<{ user: { id: string; name: string; email: string } }>({ user: "object" });
const readTeam = object<TeamDto>({ team: "object", role: "string" });
const readAny = object<Record<string, unknown>>();
const readSecondStep = object<{ second_factor_required?: boolean; user?: { id: string } }>(
  {},
  { second_factor_required: "boolean", user: "object" },
);

export const accountQueries = {
  security: () =>
    queryOptions({
      queryKey: accountKeys.security(),
      queryFn: ({ signal }) => apiJson({ path: "/api/me/security", signal }, readSecurity),
    }),
  sessions: () =>
    queryOptions({
      queryKey: accountKeys.sessions(),
      queryFn: ({ signal }) => apiJson({ path: "/api/me/sessions", signal }, readSessions),
    }),
};

export const accountMutations = {
  rename: (name: string) => apiJson({ method: "PATCH", path: "/api/me", body: { name } }, readUser),
  changePassword: (body: { current_password: string; new_password: string }) =>
    apiJson({ method: "POST", path: "/api/me/password", body }, object<{ sessions_revoked: number }>()),
  revokeSession: (id: string) =>
    apiJson({ method: "DELETE", path: path`/api/me/sessions/${id}` }, object<{ current: boolean }>()),
  startTotp: () => apiJson({ method: "POST", path: "/api/me/totp" }, readEnrolment),
  confirmTotp: (code: string) => apiJson({ method: "POST", path: "/api/me/totp/confirm", body: { code } }, readCodes),
  newRecoveryCodes: (code: string) =>
    apiJson({ method: "POST", path: "/api/me/totp/recovery-codes", body: { code } }, readCodes),
  disableTotp: (body: { password?: string; code?: string }) =>
    apiJson({ method: "DELETE", path: "/api/me/totp", body }, readAny),
};

export const teamMutations = {
  update: (body: { name?: string; slug?: string; admins_manage_billing?: boolean }) =>
    apiJson({ method: "PATCH", path: "/api/team", body }, readTeam),
  remove: (body: { confirm: string; sandboxes: "terminate" | "leave" }) =>
    apiJson({ method: "DELETE", path: "/api/team", body }, object<{ terminated: number; tokens_revoked: number }>()),
};

/** The password step answers either a session (`user`) or that a code is needed. */
export const signInSteps = {
  password: (body: { email: string; password: string }) =>
    apiJson({ method: "POST", path: "/api/auth/login", body }, readSecondStep),
  code: (code: string) => apiJson({ method: "POST", path: "/api/auth/login/second-factor", body: { code } }, readUser),
};
