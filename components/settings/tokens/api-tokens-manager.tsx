"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import {
  DEFAULT_EXPIRY_DAYS,
  EXPIRY_DAYS,
  MAX_TOKEN_NAME,
  SCOPE_LABELS,
  type TokenScope,
} from "../../../lib/api-tokens/scope";
import { parseTokenCap, parseTokenConcurrency, tokenLimitsText } from "../../../lib/api-tokens/limits-form";
import { formatDateTime, formatUtc } from "../../../lib/format";
import { errorText, OrkestrError } from "../../../lib/orkestr/errors";
import { apiTokenKeys, apiTokenMutations, apiTokenQueries } from "../../../lib/queries/api-tokens";
import type { ApiTokenDto, ApiTokensView, CreatedApiTokenDto } from "../../../lib/validations/api-tokens";
import { Badge } from "../../ui/badge";
import { Button } from "../../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { AgentSetup } from "./agent-setup";
import { Dialog, DialogActions } from "../../ui/dialog";
import { Input } from "../../ui/input";
import { Label } from "../../ui/label";
import { CopyableValue, SecretOnce } from "../../ui/secret-once";
import { useNow } from "../../../lib/use-now";
import { TableScroll } from "../../ui/table";

// Settings → API tokens (issue 23): make a personal token for the team (name, scope, expiry, and
// optionally its own monthly spend cap and maximum of concurrent sandboxes), see it once with a copy
// button, and the list with revoke. Admins and owners see every member's.

const SELECT =
  "h-9 rounded-md border border-input bg-background px-2 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring";

const SCOPE_HELP: Record<TokenScope, string> = {
  read: "Reads the team's sandboxes and resources; changes nothing.",
  write: "Also creates and changes sandboxes and their resources, as a member; never the team's settings.",
};

const REVOKED_WHY: Record<string, string> = {
  revoked: "revoked",
  member_left: "revoked: left the team",
  member_removed: "revoked: removed from the team",
  member_disabled: "revoked: disabled in the team",
  account_disabled: "revoked: account disabled",
  role_changed: "revoked: role changed",
};

function expiryLabel(days: number | null): string {
  return days === null ? "Never" : days === 365 ? "1 year" : `${days} days`;
}

/** What a token is now: live, expired, or revoked (and why). */
function status(t: ApiTokenDto, now: number | null): { label: string; tone: "success" | "neutral" | "destructive" } {
  if (t.revoked_at) return { label: REVOKED_WHY[t.revoked_reason ?? "revoked"] ?? "revoked", tone: "destructive" };
  if (t.expires_at && now !== null && Date.parse(t.expires_at) <= now) return { label: "expired", tone: "neutral" };
  return { label: "active", tone: "success" };
}

function When({ at }: { at: string | null }) {
  if (!at) return <span className="text-muted-foreground">—</span>;
  // Date and time each unbroken, so a narrow column wraps between them and never inside a date.
  const [date, time] = formatDateTime(at).split(" ");
  return (
    <time dateTime={at} title={formatUtc(at)}>
      <span className="whitespace-nowrap">{date}</span> <span className="whitespace-nowrap">{time}</span>
    </time>
  );
}

/** The new token, shown once: copy it now, with how to use it. */
function IssuedToken({ issued, onDone }: { issued: CreatedApiTokenDto; onDone: () => void }) {
  const origin = typeof window === "undefined" ? "" : window.location.origin;
  const curl = `curl -H "Authorization: Bearer ${issued.token}" ${origin}/api/v1/sandboxes`;
  return (
    <SecretOnce
      variant="success"
      data-testid="api-token-issued"
      title={<>Token “{issued.api_token.name}” made</>}
      notice={
        <>
          Copy it now: it is shown only this once, and Baton keeps only a hash of it.{" "}
          {issued.api_token.expires_at
            ? `It expires on ${formatDateTime(issued.api_token.expires_at)}.`
            : "It never expires: revoke it when it is no longer needed."}
        </>
      }
      value={issued.token}
      copyLabel="Copy token"
      announce={{ title: "Token copied", description: "Keep it in a secret store, never in code." }}
      valueTestId="api-token-value"
      onDone={onDone}
    >
      <p className="text-xs text-muted-foreground">
        Send it as <code className="font-mono">Authorization: Bearer …</code> to Baton&apos;s{" "}
        <code className="font-mono">/api/v1</code>, for example:
      </p>
      <CopyableValue value={curl} copyLabel="Copy command" />
      <p className="text-xs text-muted-foreground">
        Or give it to a coding agent over MCP (<code className="font-mono">/api/mcp</code>), or to the orkestr SDK:
      </p>
      <AgentSetup token={issued.token} />
    </SecretOnce>
  );
}

function CreateTokenForm({ view, onIssued }: { view: ApiTokensView; onIssued: (c: CreatedApiTokenDto) => void }) {
  const id = useId();
  const queryClient = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: apiTokenMutations.create,
    onSuccess: async (created, _vars) => {
      setError(null);
      onIssued(created);
      await queryClient.invalidateQueries({ queryKey: apiTokenKeys.all });
    },
    onError: (e) => setError(e instanceof OrkestrError ? (e.forField("name") ?? errorText(e)) : errorText(e)),
  });
  const expiries = EXPIRY_DAYS.filter((d) => d !== null || view.may_never_expire);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const expiry = String(form.get("expiry"));
    const cap = parseTokenCap(String(form.get("spend_cap") ?? ""));
    const concurrency = parseTokenConcurrency(String(form.get("max_concurrent") ?? ""));
    if (!cap.ok || !concurrency.ok) {
      setError(!cap.ok ? cap.error : !concurrency.ok ? concurrency.error : null);
      return;
    }
    create.mutate(
      {
        name: String(form.get("name") ?? ""),
        scope: String(form.get("scope")) as TokenScope,
        expires_in_days: expiry === "never" ? null : Number(expiry),
        spend_cap_micro: cap.value,
        max_concurrent_sandboxes: concurrency.value,
      },
      { onSuccess: () => (event.target as HTMLFormElement).reset() },
    );
  }

  return (
    <form onSubmit={onSubmit} aria-label="Make an API token" className="flex flex-col gap-3">
      <div className="grid gap-3 sm:grid-cols-[minmax(0,1fr)_auto_auto]">
        <div className="flex min-w-0 flex-col gap-1.5">
          <Label htmlFor={`${id}-name`}>Name</Label>
          <Input
            id={`${id}-name`}
            name="name"
            required
            maxLength={MAX_TOKEN_NAME}
            autoComplete="off"
            placeholder="CI deploys"
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? `${id}-error` : `${id}-scope-help`}
          />
        </div>
        <div className="flex flex-col gap-1.5">
          <Label htmlFor={`${id}-scope`}>Scope</Label>
          <select
            id={`${id}-scope`}
            name="scope"
            className={SELECT}
            defaultValue={view.scopes.includes("write") ? "write" : "read"}
            aria-describedby={`${id}-scope-help`}
          >
            {view.scopes.map((s) => (
              <option key={s} value={s}>
                {SCOPE_LABELS[s]}
              </option>
            ))}
          </select>
        </div>
        <div className="flex flex-col gap-1.5">
          <Label htmlFor={`${id}-expiry`}>Expires after</Label>
          <select id={`${id}-expiry`} name="expiry" className={SELECT} defaultValue={String(DEFAULT_EXPIRY_DAYS)}>
            {expiries.map((d) => (
              <option key={d ?? "never"} value={d === null ? "never" : String(d)}>
                {expiryLabel(d)}
              </option>
            ))}
          </select>
        </div>
      </div>
      <fieldset className="grid gap-3 sm:grid-cols-2">
        <legend className="mb-1.5 text-sm font-medium">
          Limits of this token <span className="font-normal text-muted-foreground">(optional)</span>
        </legend>
        <div className="flex min-w-0 flex-col gap-1.5">
          <Label htmlFor={`${id}-cap`}>Monthly spend cap (EUR)</Label>
          <Input
            id={`${id}-cap`}
            name="spend_cap"
            inputMode="decimal"
            autoComplete="off"
            placeholder="No cap"
            aria-describedby={`${id}-limits-help`}
          />
        </div>
        <div className="flex min-w-0 flex-col gap-1.5">
          <Label htmlFor={`${id}-concurrent`}>Concurrent sandboxes at most</Label>
          <Input
            id={`${id}-concurrent`}
            name="max_concurrent"
            type="number"
            min={1}
            max={100}
            step={1}
            inputMode="numeric"
            autoComplete="off"
            placeholder="No limit"
            aria-describedby={`${id}-limits-help`}
          />
        </div>
        <p id={`${id}-limits-help`} className="text-xs text-muted-foreground sm:col-span-2">
          A leaked or looping agent then costs at most this. The cap counts what the sandboxes made with this token cost
          in the calendar month (UTC), as Baton&apos;s usage record last read it: once reached, the token can no longer
          create, fork, resume or keep sandboxes alive, and its running sandboxes are paused. Concurrent counts its
          sandboxes that are not terminated (paused ones included). Limits cannot be raised later: make a new token.
        </p>
      </fieldset>
      <ul id={`${id}-scope-help`} className="flex flex-col gap-0.5 text-xs text-muted-foreground">
        {view.scopes.map((s) => (
          <li key={s}>
            <span className="font-medium text-foreground">{SCOPE_LABELS[s]}:</span> {SCOPE_HELP[s]}
          </li>
        ))}
        {view.scopes.includes("write") ? null : (
          <li>Your role changes nothing in this team, so your tokens only read.</li>
        )}
        {view.sso_session_max_hours === null ? null : (
          <li>
            Your tokens stop working {view.sso_session_max_hours} hours after your last SSO sign-in; sign in again to
            renew them.
          </li>
        )}
      </ul>
      {error ? (
        <p id={`${id}-error`} role="alert" className="text-sm text-destructive">
          {error}
        </p>
      ) : null}
      <div>
        <Button type="submit" disabled={create.isPending}>
          {create.isPending ? "Making…" : "Make token"}
        </Button>
      </div>
    </form>
  );
}

function TokenTable({ view, onRevoke }: { view: ApiTokensView; onRevoke: (t: ApiTokenDto) => void }) {
  // Null in the server's render: expiry is judged in the browser (the same second-ticking clock as the rest).
  const now = useNow();
  return (
    <TableScroll className="rounded-lg border" tabIndex={0} role="region" aria-label="API tokens">
      <table className="w-full text-sm">
        <caption className="sr-only">
          {view.manages_all ? "Every API token of the team, newest first" : "Your API tokens, newest first"}
        </caption>
        <thead className="border-b bg-muted/40 text-left text-xs whitespace-nowrap text-muted-foreground">
          <tr>
            <th scope="col" className="px-3 py-2 font-medium">
              Name
            </th>
            {view.manages_all ? (
              <th scope="col" className="px-3 py-2 font-medium">
                Owner
              </th>
            ) : null}
            <th scope="col" className="px-3 py-2 font-medium">
              Scope and limits
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Created
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Last used
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Expires
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Status
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {view.tokens.map((t) => {
            const s = status(t, now);
            return (
              <tr key={t.id} className="border-b last:border-0" data-testid="api-token-row" data-name={t.name}>
                <td className="min-w-32 px-3 py-2">
                  <div className="font-medium break-words">{t.name}</div>
                  <code className="font-mono text-xs whitespace-nowrap text-muted-foreground">{t.hint}</code>
                </td>
                {view.manages_all ? (
                  <td className="min-w-28 px-3 py-2">
                    {t.owner.name || t.owner.email}
                    {t.mine ? <span className="text-muted-foreground"> (you)</span> : null}
                  </td>
                ) : null}
                <td className="px-3 py-2 whitespace-nowrap">
                  {SCOPE_LABELS[t.scope]}
                  {/* The token's own limits under its scope: one more column would not fit at 1280 px. */}
                  {tokenLimitsText(t).length > 0 ? (
                    <div className="text-xs text-muted-foreground" data-testid="api-token-limits">
                      {tokenLimitsText(t).map((line) => (
                        <div key={line}>{line}</div>
                      ))}
                    </div>
                  ) : null}
                </td>
                <td className="px-3 py-2">
                  <When at={t.created_at} />
                </td>
                <td className="px-3 py-2" data-testid="api-token-last-used">
                  {t.last_used_at ? (
                    <>
                      <When at={t.last_used_at} />
                      {t.last_used_ip ? (
                        <div className="font-mono text-xs whitespace-nowrap text-muted-foreground">
                          from {t.last_used_ip}
                        </div>
                      ) : null}
                    </>
                  ) : (
                    <span className="text-muted-foreground">Never</span>
                  )}
                </td>
                <td className="px-3 py-2">{t.expires_at ? <When at={t.expires_at} /> : "Never"}</td>
                <td className="px-3 py-2">
                  <Badge variant={s.tone}>{s.label}</Badge>
                </td>
                <td className="px-3 py-2 text-right">
                  {t.revoked_at ? null : (
                    <Button size="sm" variant="destructive" onClick={() => onRevoke(t)}>
                      Revoke<span className="sr-only"> the token {t.name}</span>
                    </Button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** Settings → API tokens, below the page header. */
export function ApiTokensManager({ initial, teamName }: { initial: ApiTokensView; teamName: string }) {
  const queryClient = useQueryClient();
  const list = useQuery({ ...apiTokenQueries.list(), initialData: initial });
  const [issued, setIssued] = useState<CreatedApiTokenDto | null>(null);
  const [confirm, setConfirm] = useState<ApiTokenDto | null>(null);
  const [revokeError, setRevokeError] = useState<string | null>(null);
  const revoke = useMutation({
    mutationFn: (id: string) => apiTokenMutations.revoke(id),
    onSuccess: async () => {
      setConfirm(null);
      setRevokeError(null);
      await queryClient.invalidateQueries({ queryKey: apiTokenKeys.all });
    },
    onError: (e) => setRevokeError(errorText(e)),
  });
  const view = list.data;

  return (
    <div className="flex flex-col gap-6">
      <Card>
        <CardHeader>
          <CardTitle>Make a token</CardTitle>
          <CardDescription>
            A personal token lets a script, a CI job or an agent use Baton&apos;s <code>/api/v1</code> as you, in{" "}
            {teamName} only, never with more than your role. It stops working when you leave the team or lose the role
            it needs.
          </CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-4">
          <CreateTokenForm view={view} onIssued={setIssued} />
          {issued ? <IssuedToken issued={issued} onDone={() => setIssued(null)} /> : null}
        </CardContent>
      </Card>

      {issued ? null : (
        <Card>
          <CardHeader>
            <CardTitle>Agents and the SDK</CardTitle>
            <CardDescription>
              Coding agents reach Baton over MCP at <code>/api/mcp</code>, scripts through the orkestr SDK at{" "}
              <code>/api</code>, both with a token: what they do is under its role, the team&apos;s spend caps and the
              audit log. Make a token above to get these with it filled in.
            </CardDescription>
          </CardHeader>
          <CardContent>
            <AgentSetup token="bat_YOUR_TOKEN" />
          </CardContent>
        </Card>
      )}

      <Card>
        <CardHeader>
          <CardTitle>{view.manages_all ? "The team's tokens" : "Your tokens"}</CardTitle>
          <CardDescription>
            {view.manages_all
              ? `Every member's tokens in ${teamName}: as an admin or owner you can revoke any of them.`
              : `Your tokens in ${teamName}.`}{" "}
            Last use is recorded at most once a minute. Times are in your time zone (hover for UTC).
          </CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-3">
          {list.isError ? (
            <div role="alert" className="flex flex-wrap items-center gap-2 text-sm text-destructive">
              Could not refresh the list: {errorText(list.error)}
              <Button size="sm" variant="outline" onClick={() => list.refetch()}>
                Retry
              </Button>
            </div>
          ) : null}
          {revokeError ? (
            <p role="alert" className="text-sm text-destructive">
              {revokeError}
            </p>
          ) : null}
          {view.tokens.length === 0 ? (
            <p className="text-sm text-muted-foreground" data-testid="api-tokens-empty">
              No tokens yet. Make one above.
            </p>
          ) : (
            <TokenTable view={view} onRevoke={setConfirm} />
          )}
        </CardContent>
      </Card>

      <Dialog
        open={confirm !== null}
        onOpenChange={(open) => !open && setConfirm(null)}
        title={`Revoke the token “${confirm?.name ?? ""}”?`}
        description={
          confirm && !confirm.mine
            ? `It belongs to ${confirm.owner.name || confirm.owner.email}. It stops working at once; whatever uses it gets 401 from its next request.`
            : "It stops working at once; whatever uses it gets 401 from its next request. This cannot be undone."
        }
      >
        <DialogActions>
          <Button
            variant="destructive"
            disabled={revoke.isPending}
            onClick={() => confirm && revoke.mutate(confirm.id)}
          >
            {revoke.isPending ? "Revoking…" : "Revoke token"}
          </Button>
        </DialogActions>
      </Dialog>
    </div>
  );
}
