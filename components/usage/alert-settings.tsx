"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { errorText } from "../../lib/orkestr/errors";
import { capsKeys, capsMutations, capsQueries, type AlertSettingsView } from "../../lib/queries/caps";
import { QueryError } from "../layout/query-error";
import { Button } from "../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../ui/card";
import { Dialog, DialogActions } from "../ui/dialog";
import { Input } from "../ui/input";
import { Label } from "../ui/label";
import { SecretOnce } from "../ui/secret-once";
import { Skeleton } from "../ui/skeleton";

type Change = Parameters<typeof capsMutations.alerts>[0];

/**
 * Where the team's spend alerts go besides the console and the audit log (billing managers; GET and
 * PATCH /api/usage/alerts): e-mail to the owners and admins, and a signed webhook. A new signing
 * secret (first URL, new URL, rotate) is shown once, with a copy button; rotating asks first. The
 * server's refusals (an internal or private address: the SSRF guard) are shown as it words them.
 */
export default function AlertSettingsCard() {
  const ids = useId();
  const client = useQueryClient();
  const settings = useQuery(capsQueries.alerts());
  const [url, setUrl] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const [confirmRotate, setConfirmRotate] = useState(false);
  // The box shows the choice at once; the saved value again once the change is answered.
  const [emailShown, setEmailShown] = useState<boolean | null>(null);

  if (settings.isPending) return <Skeleton className="h-40 w-full" />;
  if (settings.isError)
    return (
      <QueryError
        title="The alert settings could not be read"
        error={settings.error}
        fallback="Baton could not read where this team's spend alerts go."
        onRetry={() => void settings.refetch()}
      />
    );
  const s = settings.data;
  const urlValue = url ?? s.webhook_url ?? "";

  const save = async (change: Change) => {
    setPending(true);
    setFailure(null);
    try {
      const answer = await capsMutations.alerts(change);
      const { webhook_secret, ...view } = answer;
      client.setQueryData<AlertSettingsView>(capsKeys.alerts(), view);
      setSecret(webhook_secret ?? null);
      setUrl(null);
      setConfirmRotate(false);
    } catch (err) {
      setFailure(errorText(err, "The alert settings could not be saved."));
    } finally {
      setPending(false);
    }
  };
  const submitUrl = (e: FormEvent) => {
    e.preventDefault();
    void save({ webhook_url: urlValue.trim() === "" ? null : urlValue.trim() });
  };

  return (
    <Card data-testid="spend-alert-settings">
      <CardHeader>
        <CardTitle>Where alerts go</CardTitle>
        <CardDescription>
          Alerts at 50, 80 and 100 % of each cap always show in the console and the audit log. Also:
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-6">
        <div className="flex flex-col gap-1.5">
          <label className="flex items-center gap-2 text-sm font-medium">
            <input
              type="checkbox"
              className="size-4 accent-primary"
              checked={emailShown ?? s.email}
              disabled={pending}
              onChange={(e) => {
                const email = e.target.checked;
                setEmailShown(email);
                void save({ email }).finally(() => setEmailShown(null));
              }}
              aria-describedby={`${ids}-email-hint`}
            />
            E-mail the team&apos;s owners and admins
          </label>
          <p id={`${ids}-email-hint`} className="text-xs text-muted-foreground">
            {s.email_configured
              ? "Sent once per threshold and window."
              : "This Baton has no mail server (BATON_SMTP_URL), so no e-mail goes out until its operator sets one."}
          </p>
        </div>

        <form onSubmit={submitUrl} className="flex flex-col gap-2" aria-label="Alert webhook">
          <Label htmlFor={`${ids}-url`}>Webhook URL</Label>
          <div className="flex flex-col gap-2 sm:flex-row">
            <Input
              id={`${ids}-url`}
              type="url"
              value={urlValue}
              onChange={(e) => setUrl(e.target.value)}
              placeholder="https://alerts.example.com/baton"
              autoComplete="off"
              aria-describedby={`${ids}-url-hint`}
            />
            <Button type="submit" variant="secondary" disabled={pending} className="shrink-0">
              {pending ? "Saving…" : "Save URL"}
            </Button>
          </div>
          <p id={`${ids}-url-hint`} className="text-xs text-muted-foreground">
            Each alert is POSTed as JSON, signed like orkestr webhooks (X-Orkestr-Signature: sha256=HMAC of the body,
            with the secret shown once when it is made). Internal and private addresses are refused. Empty the field and
            save to stop.
          </p>
          {s.webhook_url ? (
            <div className="flex flex-wrap items-center gap-2">
              <span className="text-sm" role="status">
                {s.webhook_secret_set ? "Signing secret set." : "No signing secret."}
              </span>
              <Button
                type="button"
                size="sm"
                variant="outline"
                disabled={pending}
                onClick={() => setConfirmRotate(true)}
              >
                New signing secret
              </Button>
            </div>
          ) : null}
        </form>

        {failure ? (
          <p role="alert" className="text-sm text-destructive" data-testid="spend-alert-error">
            {failure}
          </p>
        ) : null}

        {secret ? (
          <SecretOnce
            title="Signing secret: shown once"
            notice="Give it to the receiver now: Baton does not show it again."
            value={secret}
            copyLabel="Copy secret"
            announce={{ title: "Signing secret copied" }}
            valueTestId="spend-alert-secret"
            onDone={() => setSecret(null)}
          />
        ) : null}
      </CardContent>

      <Dialog
        open={confirmRotate}
        onOpenChange={(open) => {
          setConfirmRotate(open);
          if (!open) setFailure(null);
        }}
        title="Make a new signing secret?"
        description="The receiver must be given the new secret: alerts signed with it fail the old one's check."
      >
        {failure ? (
          <p role="alert" className="text-sm text-destructive">
            {failure}
          </p>
        ) : null}
        <DialogActions cancelDisabled={pending}>
          <Button variant="destructive" disabled={pending} onClick={() => void save({ rotate_secret: true })}>
            {pending ? "Making…" : "Make a new secret"}
          </Button>
        </DialogActions>
      </Dialog>
    </Card>
  );
}
