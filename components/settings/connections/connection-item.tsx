"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { formatDateTime } from "../../../lib/format";
import { OrkestrError, errorText } from "../../../lib/orkestr/errors";
import { connectionKeys, connectionMutations } from "../../../lib/queries/connections";
import type { ConnectionListItemDto } from "../../../lib/validations/connections";
import { Badge } from "../../ui/badge";
import { Button } from "../../ui/button";
import { Dialog, DialogActions } from "../../ui/dialog";
import { TokenInput } from "./token-input";
import { Label } from "../../ui/label";

function lastCheck(c: ConnectionListItemDto): { ok: boolean; text: string } | null {
  if (!c.last_checked_at) return null;
  const when = formatDateTime(c.last_checked_at);
  if (!c.last_error) return { ok: true, text: `OK · checked ${when}` };
  // "code: detail" → the detail.
  const detail = c.last_error.replace(/^[a-z_]+: /, "");
  return { ok: false, text: `${detail} (checked ${when})` };
}

/**
 * One connection: name, its team, base URL, token hint, active badge, last check; set active,
 * replace token and remove, each offered only when the role in the connection's team allows it
 * (`allowed`, the same check the API makes).
 */
export function ConnectionItem({ connection: c }: { connection: ConnectionListItemDto }) {
  const queryClient = useQueryClient();
  const id = useId();
  const [replacing, setReplacing] = useState(false);
  const [confirmRemove, setConfirmRemove] = useState(false);
  const [tokenError, setTokenError] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: connectionKeys.all });

  const replace = useMutation({
    mutationFn: (token: string) => connectionMutations.replaceToken(c.id, token),
    onSuccess: async () => {
      setReplacing(false);
      setTokenError(null);
      await refresh();
    },
    onError: (error) =>
      setTokenError(error instanceof OrkestrError ? (error.forField("token") ?? errorText(error)) : errorText(error)),
  });
  const activate = useMutation({
    mutationFn: () => connectionMutations.activate(c.id),
    onSuccess: refresh,
    onError: (error) => setActionError(errorText(error)),
  });
  const remove = useMutation({
    mutationFn: () => connectionMutations.remove(c.id),
    onSuccess: async () => {
      setConfirmRemove(false);
      await refresh();
    },
    onError: (error) => setActionError(errorText(error)),
  });

  function onReplace(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const input = event.currentTarget.querySelector<HTMLInputElement>('[name="token"]');
    const token = input?.value ?? "";
    if (input) input.value = "";
    replace.mutate(token);
  }

  const check = lastCheck(c);
  return (
    <li
      className="flex flex-col gap-3 rounded-lg border bg-card p-4 text-card-foreground"
      aria-label={`Connection ${c.name}`}
      data-testid="connection-item"
    >
      <div className="flex flex-col gap-2 sm:flex-row sm:items-start sm:justify-between">
        <div className="flex min-w-0 flex-col gap-1">
          <div className="flex flex-wrap items-center gap-2">
            <h3 className="font-medium">{c.name}</h3>
            {c.is_active ? <Badge variant="success">Active</Badge> : null}
            {c.is_local_engine ? <Badge variant="outline">Local engine</Badge> : null}
          </div>
          <p className="text-xs text-muted-foreground" data-testid="connection-team">
            {c.team_name ? `Team ${c.team_name}` : "Not used: it belongs to no team of yours"}
          </p>
          <p className="truncate font-mono text-xs text-muted-foreground" title={c.base_url} data-testid="base-url">
            {c.base_url}
          </p>
          <p className="text-xs">
            <span className="text-muted-foreground">Token </span>
            <code className="font-mono">{c.token_hint}</code>
          </p>
          {check ? (
            <p className={check.ok ? "text-xs text-success" : "text-xs text-destructive"} data-testid="last-check">
              {check.text}
            </p>
          ) : (
            <p className="text-xs text-muted-foreground">Not checked yet</p>
          )}
        </div>
        {c.allowed.activate || c.allowed.replace_token || c.allowed.remove ? (
          <div className="flex flex-wrap gap-2 sm:shrink-0">
            {!c.is_active && c.allowed.activate ? (
              <Button size="sm" variant="outline" onClick={() => activate.mutate()} disabled={activate.isPending}>
                {activate.isPending ? "Switching…" : "Set active"}
              </Button>
            ) : null}
            {c.allowed.replace_token ? (
              <Button
                size="sm"
                variant="outline"
                aria-expanded={replacing}
                aria-controls={`${id}-replace`}
                onClick={() => setReplacing((v) => !v)}
              >
                Replace token
              </Button>
            ) : null}
            {c.allowed.remove ? (
              <Button size="sm" variant="destructive" onClick={() => setConfirmRemove(true)}>
                Remove
              </Button>
            ) : null}
          </div>
        ) : null}
      </div>
      {actionError ? (
        <p role="alert" className="text-sm text-destructive">
          {actionError}
        </p>
      ) : null}
      {replacing ? (
        <form
          id={`${id}-replace`}
          onSubmit={onReplace}
          aria-label={`Replace the token of ${c.name}`}
          className="flex flex-col gap-2 border-t pt-3"
        >
          <Label htmlFor={`${id}-token`}>New API token</Label>
          <div className="flex flex-col gap-2 sm:flex-row">
            <TokenInput
              id={`${id}-token`}
              autoFocus
              aria-invalid={tokenError ? true : undefined}
              aria-describedby={tokenError ? `${id}-token-error` : undefined}
            />
            <Button type="submit" disabled={replace.isPending}>
              {replace.isPending ? "Checking…" : "Save token"}
            </Button>
            <Button variant="ghost" onClick={() => setReplacing(false)}>
              Cancel
            </Button>
          </div>
          {tokenError ? (
            <p id={`${id}-token-error`} className="text-sm text-destructive">
              {tokenError}
            </p>
          ) : (
            <p className="text-xs text-muted-foreground">The current token stays until the new one has been checked.</p>
          )}
        </form>
      ) : null}
      <Dialog
        open={confirmRemove}
        onOpenChange={setConfirmRemove}
        title={`Remove “${c.name}”?`}
        description={`Baton forgets this connection and its token (${c.token_hint}). The token itself stays valid at ${c.base_url} until you revoke it there.${c.is_active ? " Another connection becomes active." : ""}`}
      >
        <DialogActions>
          <Button variant="destructive" onClick={() => remove.mutate()} disabled={remove.isPending}>
            {remove.isPending ? "Removing…" : "Remove connection"}
          </Button>
        </DialogActions>
      </Dialog>
    </li>
  );
}
