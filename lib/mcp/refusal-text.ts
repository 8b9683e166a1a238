// A refused Baton API call as an MCP tool error: what happened (Baton's own sentence, which names
// the cap, the role or the limit), then what has to happen next and whether an agent can do it
// alone. The agent reads this text; a person reads it in the agent's transcript.

export interface Refusal {
  status: number;
  code: string | null;
  detail: string | null;
}

export function refusalOf(status: number, body: unknown): Refusal {
  const b = body && typeof body === "object" ? (body as { code?: unknown; detail?: unknown }) : {};
  return {
    status,
    code: typeof b.code === "string" ? b.code : null,
    detail: typeof b.detail === "string" ? b.detail : typeof body === "string" && body ? body.slice(0, 500) : null,
  };
}

/** What must happen next, by refusal: null when Baton's sentence says it all. */
function nextStep({ status, code }: Refusal): string | null {
  if (code === "spend_cap_reached")
    return "A person must act: a billing manager of the team raises or removes the cap on Baton's Usage page. Retrying will not help until then.";
  if (code === "trial_exhausted")
    return "A person must act: the orkestr account's trial credit is used up; the account owner adds a payment method. Retrying will not help.";
  if (code === "fleet_full")
    return "The region has no room right now. Wait (Retry-After, when given) and try again, or try another region.";
  if (code === "concurrency_limit")
    return "Too many sandboxes are running for the plan or the token: terminate or pause one you no longer need, then try again.";
  if (status === 401)
    return "A person must act: the Baton token is missing, expired or revoked. Create a new one in Baton under Settings → API tokens.";
  if (status === 403)
    return "A person must act: this token's role or scopes do not allow it. A team admin can grant a role that does, or create a token with the write scope.";
  if (status === 404) return "Check the id: list sandboxes to see the ones this token can reach.";
  if (status === 429) return "Too many requests: wait a little and try again.";
  if (status >= 500)
    return "Baton or the sandbox service had a problem. Try again shortly; if it persists, tell a person.";
  return null;
}

export function refusalText(action: string, refusal: Refusal): string {
  const what = refusal.detail ?? `HTTP ${refusal.status}`;
  const code = refusal.code ? ` [${refusal.code}, HTTP ${refusal.status}]` : ` [HTTP ${refusal.status}]`;
  const next = nextStep(refusal);
  return `Could not ${action}: ${what}${code}${next ? `\n${next}` : ""}`;
}
