import { queryOptions } from "@tanstack/react-query";
import { apiJson, apiVoid } from "../api/core";
import { object } from "../api/read";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { SsoConfigBody, SsoSettings, SsoTestResultView } from "../validations/sso";

// Per-team SSO settings (/api/team/sso), the test sign-in, and the instance owner's domain approvals.

export const ssoKeys = {
  all: ["sso"] as const,
  settings: () => ["sso", "settings"] as const,
  domains: () => ["sso", "admin-domains"] as const,
};

export interface AdminDomain {
  domain: string;
  team: { id: string; name: string; slug: string } | null;
  approved: boolean;
  approved_at: number | null;
}

const readSettings = object<SsoSettings>(
  { domains: "array", redirect_uri: "string", is_instance_owner: "boolean" },
  { config: "object" },
);
const readTestStart = object<{ url: string }>({ url: "string" });
const readTestResult = object<{ tested_at: number | null; last_test: SsoTestResultView | null }>(
  {},
  { last_test: "object" },
);
const readDomains = object<{ domains: AdminDomain[] }>({ domains: "array" });
const readApproved = object<{ domain: string; approved: boolean }>({ domain: "string", approved: "boolean" });

export const ssoQueries = {
  settings: () =>
    queryOptions({
      queryKey: ssoKeys.settings(),
      queryFn: ({ signal }) => apiJson({ path: "/api/team/sso", signal }, readSettings),
    }),
  domains: () =>
    queryOptions({
      queryKey: ssoKeys.domains(),
      queryFn: ({ signal }) => apiJson({ path: "/api/admin/sso-domains", signal }, readDomains),
    }),
};

export const ssoMutations = {
  /** PUT /api/team/sso. `client_secret` left out keeps the stored one. */
  save: (body: Partial<SsoConfigBody> & Pick<SsoConfigBody, "issuer" | "client_id">) =>
    apiJson({ method: "PUT", path: "/api/team/sso", body }, readSettings),
  remove: () => apiVoid({ method: "DELETE", path: "/api/team/sso" }),
  /** POST /api/team/sso/test: the IdP's sign-in page to open. */
  startTest: () => apiJson({ method: "POST", path: "/api/team/sso/test", body: {} }, readTestStart),
  testResult: () => apiJson({ path: "/api/team/sso/test-result" }, readTestResult),
  approveDomain: (domain: string) =>
    apiJson({ method: "POST", path: "/api/admin/sso-domains", body: { domain } }, readApproved),
};

/** Where "Sign in with SSO" sends the browser (a navigation, not a fetch: the IdP's page follows). */
export function ssoStartHref(input: { email?: string; team?: string; next?: string | null }): string {
  const q = new URLSearchParams();
  if (input.team) q.set("team", input.team);
  else if (input.email) q.set("email", input.email);
  if (input.next) q.set("next", input.next);
  return `/api/auth/sso/start?${q}`;
}
