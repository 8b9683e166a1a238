"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { errorText } from "../../lib/orkestr/errors";
import {
  auditKeys,
  auditQueries,
  updateAuditSettings,
  type AuditSettingsAnswer,
  type AuditSettingsChange,
} from "../../lib/queries/audit";
import { QueryError } from "../layout/query-error";
import { Button } from "../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../ui/card";
import { Dialog } from "../ui/dialog";
import { Input } from "../ui/input";
import { Label } from "../ui/label";
import { SecretOnce } from "../ui/secret-once";
import { Skeleton } from "../ui/skeleton";

/**
 * The owner's audit settings: how long rows are kept, and the SIEM stream (URL, on/off, signing
 * secret shown once when made). Shortening the retention deletes older rows at the next
 * housekeeping pass, so it asks first.
 */
export function AuditSettingsCard() {
  const ids = useId();
  const queryClient = useQueryClient();
  const settings = useQuery(auditQueries.settings());
  const [retention, setRetention] = useState<string | null>(null);
  const [url, setUrl] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<AuditSettingsChange | null>(null);
  const save = useMutation({
    mutationFn: updateAuditSettings,
    onSuccess: (answer: AuditSettingsAnswer) => {
      queryClient.setQueryData(auditKeys.settings(), { settings: answer.settings, stream: answer.stream });
      if (answer.siem_secret) setSecret(answer.siem_secret);
      setRetention(null);
      setUrl(null);
      setConfirm(null);
      void queryClient.invalidateQueries({ queryKey: auditKeys.all });
    },
  });

  if (settings.isPending) return <Skeleton className="h-40 w-full" />;
  if (settings.isError)
    return (
      <QueryError
        title="The audit settings could not be read"
        error={settings.error}
        fallback="Baton could not read the audit settings."
        onRetry={() => void settings.refetch()}
      />
    );
  const s = settings.data.settings;
  const stream = settings.data.stream;
  const retentionValue = retention ?? String(s.retention_days);
  const urlValue = url ?? s.siem_url ?? "";

  const submitRetention = (e: FormEvent) => {
    e.preventDefault();
    const days = Number(retentionValue);
    if (!Number.isInteger(days)) return;
    const change = { retention_days: days };
    if (days < s.retention_days) setConfirm(change);
    else save.mutate(change);
  };
  const submitStream = (e: FormEvent) => {
    e.preventDefault();
    save.mutate({ siem_url: urlValue.trim() === "" ? null : urlValue.trim() });
  };

  return (
    <Card>
      <CardHeader>
        <CardTitle>Audit settings</CardTitle>
        <CardDescription>Only owners change these. Every change is itself in the log.</CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-6">
        {save.isError ? (
          <p role="alert" className="text-sm text-destructive">
            {errorText(save.error, "The settings could not be saved.")}
          </p>
        ) : null}
        <form onSubmit={submitRetention} className="flex flex-col gap-1">
          <Label htmlFor={`${ids}-retention`}>Keep events for (days)</Label>
          <div className="flex flex-wrap gap-2">
            <Input
              id={`${ids}-retention`}
              type="number"
              min={1}
              max={3650}
              value={retentionValue}
              onChange={(e) => setRetention(e.target.value)}
              className="w-32"
            />
            <Button type="submit" variant="secondary" disabled={save.isPending}>
              Save retention
            </Button>
          </div>
          <p className="text-xs text-muted-foreground">
            Default 365. Older events are deleted once an hour; each deletion is recorded with its count.
          </p>
        </form>

        <form onSubmit={submitStream} className="flex flex-col gap-2">
          <Label htmlFor={`${ids}-siem`}>SIEM stream URL</Label>
          <div className="flex flex-col gap-2 sm:flex-row">
            <Input
              id={`${ids}-siem`}
              type="url"
              value={urlValue}
              onChange={(e) => setUrl(e.target.value)}
              placeholder="https://siem.example.com/ingest"
              autoComplete="off"
            />
            <Button type="submit" variant="secondary" disabled={save.isPending} className="shrink-0">
              Save URL
            </Button>
          </div>
          <p className="text-xs text-muted-foreground">
            Each new event is POSTed as JSON, signed like orkestr webhooks (X-Orkestr-Signature: sha256=HMAC of the
            body). Internal and private addresses are refused.
          </p>
          {s.siem_url ? (
            <div className="flex flex-wrap items-center gap-2">
              <span className="text-sm" role="status">
                Stream is {s.siem_enabled ? "on" : "off"}
                {stream.pending ? `; ${stream.pending} waiting` : ""}
                {stream.given_up ? `; ${stream.given_up} given up` : ""}
              </span>
              <Button
                type="button"
                size="sm"
                variant={s.siem_enabled ? "outline" : "default"}
                disabled={save.isPending}
                onClick={() => save.mutate({ siem_enabled: !s.siem_enabled })}
              >
                {s.siem_enabled ? "Turn off" : "Turn on"}
              </Button>
              <Button
                type="button"
                size="sm"
                variant="outline"
                disabled={save.isPending}
                onClick={() => setConfirm({ rotate_secret: true })}
              >
                New signing secret
              </Button>
            </div>
          ) : null}
          {stream.last_error ? (
            <p className="text-xs text-muted-foreground">Last delivery error: {stream.last_error}</p>
          ) : null}
        </form>

        {secret ? (
          <SecretOnce
            title="Signing secret: shown once"
            notice="Give it to the SIEM now: Baton does not show it again."
            value={secret}
            copyLabel="Copy secret"
            valueTestId="siem-secret"
            onDone={() => setSecret(null)}
          />
        ) : null}
      </CardContent>

      <Dialog
        open={confirm !== null}
        onOpenChange={(o) => (o ? undefined : setConfirm(null))}
        title={confirm?.rotate_secret ? "Make a new signing secret?" : "Keep events for less time?"}
        description={
          confirm?.rotate_secret
            ? "The SIEM must be given the new secret: deliveries signed with it fail the old one's check."
            : `Events older than ${confirm?.retention_days ?? ""} days will be deleted at the next housekeeping pass. This cannot be undone.`
        }
      >
        <div className="mt-4 flex justify-end gap-2">
          <Button variant="outline" onClick={() => setConfirm(null)}>
            Cancel
          </Button>
          <Button variant="destructive" disabled={save.isPending} onClick={() => confirm && save.mutate(confirm)}>
            {confirm?.rotate_secret ? "Make a new secret" : "Shorten retention"}
          </Button>
        </div>
      </Dialog>
    </Card>
  );
}
