// What a person is told when an SSO sign-in does not go through: one place for the login page, the
// test sign-in result on /settings/sso and the API's `detail`. No server-only imports.

export const SSO_ERROR_CODES = [
  "idp_unreachable",
  "idp_error",
  "sso_not_configured",
  "unknown_team",
  "invalid_state",
  "token_rejected",
  "email_missing",
  "email_unverified",
  "domain_not_allowed",
  "sso_domain_unapproved",
  "missing_group_claim",
  "group_not_allowed",
  "account_disabled",
  "sso_required",
] as const;
export type SsoErrorCode = (typeof SSO_ERROR_CODES)[number];

export const isSsoErrorCode = (v: unknown): v is SsoErrorCode =>
  typeof v === "string" && (SSO_ERROR_CODES as readonly string[]).includes(v);

/** The sentence for an SSO failure; `issuer` names the IdP where it helps. */
export function ssoMessage(code: SsoErrorCode, ctx: { issuer?: string | null; detail?: string | null } = {}): string {
  const idp = ctx.issuer || "The identity provider";
  switch (code) {
    case "idp_unreachable":
      return `${idp} did not answer; password sign-in still works for the owner.`;
    case "idp_error":
      return `${idp} refused the sign-in${ctx.detail ? ` (${ctx.detail})` : ""}. Try again, or ask your admin to check the SSO settings.`;
    case "sso_not_configured":
      return "This team has not set up single sign-on. Sign in with your email and password.";
    case "unknown_team":
      return "No team with single sign-on matches that email or team. Check the spelling, or sign in with your password.";
    case "invalid_state":
      return "This sign-in link was already used or has expired. Start the sign-in again.";
    case "token_rejected":
      return `The sign-in answer from ${idp} did not pass Baton's checks (signature, issuer, audience, expiry or nonce), so it was refused. Start again; if it keeps happening, your admin should check the client id and the IdP's clock.`;
    case "email_missing":
      return `${idp} did not send an email address. Your admin must release the email claim to Baton.`;
    case "email_unverified":
      return `${idp} says your email address is not verified. Verify it there, then sign in again.`;
    case "domain_not_allowed":
      return "Your email domain is not one of this team's SSO domains. Ask your admin to add it, or sign in with your password.";
    case "sso_domain_unapproved":
      return "Your email domain is waiting for the approval of this Baton's instance owner (who set Baton up), so nobody can sign in with it through SSO yet. Ask your admin to have the instance owner approve the domain; until then, sign in with your password if you have one.";
    case "missing_group_claim":
      return `${idp} did not send your groups, and this team only admits members of certain groups. Ask your admin.`;
    case "group_not_allowed":
      return "You are not in a group this team admits. Ask your admin to add you to an allowed group at the identity provider.";
    case "account_disabled":
      return "This account is disabled. Ask an owner or admin of your team to enable it again.";
    case "sso_required":
      return "Your team requires single sign-on. Use “Sign in with SSO”.";
  }
}
