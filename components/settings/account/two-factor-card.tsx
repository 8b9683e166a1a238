"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { formatDateTime } from "../../../lib/format";
import { errorText } from "../../../lib/orkestr/errors";
import { accountKeys, accountMutations, accountQueries } from "../../../lib/queries/account";
import type { SecurityDto, TotpEnrolmentDto } from "../../../lib/validations/account";
import { Badge } from "../../ui/badge";
import { Button } from "../../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { CopyButton } from "../../ui/copy-button";
import { Dialog, DialogActions } from "../../ui/dialog";
import { Input } from "../../ui/input";
import { Label } from "../../ui/label";
import { toast } from "../../ui/toast";

// Two-factor authentication (TOTP) for password sign-in: set up with a QR code drawn on the server
// (or the key typed by hand), confirmed with a first code; the recovery codes are shown once, with
// copy and download. While on: new recovery codes (for a code) and turning it off (password or code).

/** The key in groups of four, as authenticator apps show and accept it. */
const grouped = (secret: string) => secret.replace(/(.{4})/g, "$1 ").trim();

function CodeField({ id, label, autoFocus }: { id: string; label: string; autoFocus?: boolean }) {
  return (
    <div className="flex flex-col gap-2">
      <Label htmlFor={id}>{label}</Label>
      <Input
        id={id}
        name="code"
        inputMode="numeric"
        autoComplete="one-time-code"
        pattern="[0-9 ]{6,7}"
        maxLength={7}
        required
        autoFocus={autoFocus}
        className="max-w-40 font-mono tracking-widest"
      />
    </div>
  );
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const text = `Baton recovery codes (each works once)\n\n${codes.join("\n")}\n`;
  function download() {
    const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = "baton-recovery-codes.txt";
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }
  return (
    <section aria-labelledby="recovery-title" className="flex flex-col gap-3" data-testid="recovery-codes">
      <h3 id="recovery-title" className="font-medium">
        Your recovery codes
      </h3>
      <p className="text-sm text-muted-foreground">
        Keep them somewhere safe: each signs you in once if you lose your phone. They are shown only now.
      </p>
      <ul className="grid grid-cols-1 gap-1 rounded-md border bg-muted p-3 font-mono text-sm sm:grid-cols-2">
        {codes.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ul>
      <div className="flex flex-wrap gap-2">
        <CopyButton
          text={codes.join("\n")}
          label="Copy codes"
          announce={{ title: "Recovery codes copied" }}
          variant="outline"
        />
        <Button variant="outline" onClick={download}>
          Download
        </Button>
        <Button onClick={onDone}>I have saved them</Button>
      </div>
    </section>
  );
}

export function TwoFactorCard({ initial }: { initial: SecurityDto }) {
  const queryClient = useQueryClient();
  const security = useQuery({ ...accountQueries.security(), initialData: initial });
  const totp = security.data.totp;
  const [enrolment, setEnrolment] = useState<TotpEnrolmentDto | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [regenOpen, setRegenOpen] = useState(false);
  const [offOpen, setOffOpen] = useState(false);
  const errorId = useId();
  const refresh = () => queryClient.invalidateQueries({ queryKey: accountKeys.all });

  const start = useMutation({
    mutationFn: accountMutations.startTotp,
    onSuccess: (res) => {
      setError(null);
      setEnrolment(res);
    },
    onError: (err) => setError(errorText(err)),
  });
  const confirm = useMutation({
    mutationFn: accountMutations.confirmTotp,
    onSuccess: async (res) => {
      setError(null);
      setEnrolment(null);
      setCodes(res.recovery_codes);
      await refresh();
    },
    onError: (err) => setError(errorText(err)),
  });
  const regen = useMutation({
    mutationFn: accountMutations.newRecoveryCodes,
    onSuccess: async (res) => {
      setRegenOpen(false);
      setCodes(res.recovery_codes);
      await refresh();
    },
  });
  const off = useMutation({
    mutationFn: accountMutations.disableTotp,
    onSuccess: async () => {
      setOffOpen(false);
      setCodes(null);
      toast.success("Two-factor authentication is off");
      await refresh();
    },
  });

  const codeOf = (e: FormEvent<HTMLFormElement>) =>
    String(new FormData(e.currentTarget).get("code") ?? "").replace(/\s+/g, "");

  return (
    <Card>
      <CardHeader>
        <CardTitle className="flex flex-wrap items-center gap-2">
          Two-factor authentication
          <Badge variant={totp.enabled ? "success" : "neutral"} data-testid="totp-state">
            {totp.enabled ? "On" : "Off"}
          </Badge>
        </CardTitle>
        <CardDescription>
          With it on, signing in with your password also asks for a code from an authenticator app on your phone.
        </CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-4">
        {codes ? (
          <RecoveryCodes codes={codes} onDone={() => setCodes(null)} />
        ) : enrolment ? (
          <div className="flex flex-col gap-4" data-testid="totp-enrolment">
            <ol className="list-decimal space-y-1 pl-5 text-sm">
              <li>Scan the QR code with your authenticator app, or type the key in.</li>
              <li>Enter the 6-digit code the app shows to finish.</li>
            </ol>
            <div className="flex flex-col gap-4 sm:flex-row sm:items-start">
              {/* A data URL of an SVG drawn on the server: the secret never goes to an image service. */}
              {/* eslint-disable-next-line @next/next/no-img-element */}
              <img
                src={enrolment.qr_data_url}
                alt="QR code to scan with your authenticator app"
                width={176}
                height={176}
                className="size-44 rounded-md border bg-white p-1"
              />
              <div className="flex min-w-0 flex-col gap-2">
                <p className="text-sm font-medium" id="totp-key-label">
                  Key
                </p>
                <code
                  aria-labelledby="totp-key-label"
                  className="break-all rounded-md border bg-muted px-2 py-1 font-mono text-sm"
                  data-testid="totp-secret"
                >
                  {grouped(enrolment.secret)}
                </code>
                <div>
                  <CopyButton text={enrolment.secret} label="Copy key" size="sm" variant="outline" />
                </div>
              </div>
            </div>
            <form
              onSubmit={(e) => {
                e.preventDefault();
                if (!confirm.isPending) confirm.mutate(codeOf(e));
              }}
              className="flex flex-col gap-3"
              aria-describedby={error ? errorId : undefined}
            >
              <CodeField id="totp-confirm-code" label="Code from the app" autoFocus />
              <ErrorLine id={errorId} error={error} />
              <div className="flex flex-wrap gap-2">
                <Button type="submit" aria-disabled={confirm.isPending}>
                  {confirm.isPending ? "Checking…" : "Turn on"}
                </Button>
                <Button type="button" variant="outline" onClick={() => setEnrolment(null)}>
                  Cancel
                </Button>
              </div>
            </form>
          </div>
        ) : totp.enabled ? (
          <div className="flex flex-col gap-3">
            <p className="text-sm">
              On since {totp.confirmed_at ? formatDateTime(totp.confirmed_at) : "—"}.{" "}
              <span data-testid="recovery-left">
                {totp.recovery_codes_left} recovery code{totp.recovery_codes_left === 1 ? "" : "s"} left.
              </span>
            </p>
            <div className="flex flex-wrap gap-2">
              <Button variant="outline" onClick={() => setRegenOpen(true)}>
                New recovery codes
              </Button>
              <Button variant="destructive" onClick={() => setOffOpen(true)}>
                Turn off
              </Button>
            </div>
          </div>
        ) : (
          <div className="flex flex-col gap-3">
            <ErrorLine id={errorId} error={error} />
            <div>
              <Button onClick={() => start.mutate()} disabled={start.isPending}>
                {start.isPending ? "Preparing…" : "Set up two-factor authentication"}
              </Button>
            </div>
          </div>
        )}
      </CardContent>

      <Dialog
        open={regenOpen}
        onOpenChange={(open) => {
          setRegenOpen(open);
          if (!open) regen.reset();
        }}
        title="New recovery codes"
        description="Your old recovery codes stop working. Enter a code from your authenticator app to confirm."
      >
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (!regen.isPending) regen.mutate(codeOf(e));
          }}
          className="flex flex-col gap-4"
        >
          <CodeField id="totp-regen-code" label="Code from the app" autoFocus />
          <ErrorLine id="totp-regen-error" error={regen.isError ? errorText(regen.error) : null} />
          <DialogActions>
            <Button type="submit" aria-disabled={regen.isPending}>
              {regen.isPending ? "Checking…" : "Make new codes"}
            </Button>
          </DialogActions>
        </form>
      </Dialog>

      <Dialog
        open={offOpen}
        onOpenChange={(open) => {
          setOffOpen(open);
          if (!open) off.reset();
        }}
        title="Turn off two-factor authentication?"
        description={
          security.data.has_password
            ? "Signing in will ask for your password only. Enter your password to confirm."
            : "Enter a code from your authenticator app to confirm."
        }
      >
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (off.isPending) return;
            const form = new FormData(e.currentTarget);
            off.mutate(
              security.data.has_password
                ? { password: String(form.get("password") ?? "") }
                : { code: String(form.get("code") ?? "").replace(/\s+/g, "") },
            );
          }}
          className="flex flex-col gap-4"
        >
          {security.data.has_password ? (
            <div className="flex flex-col gap-2">
              <Label htmlFor="totp-off-password">Password</Label>
              <Input
                id="totp-off-password"
                name="password"
                type="password"
                autoComplete="current-password"
                required
                autoFocus
              />
            </div>
          ) : (
            <CodeField id="totp-off-code" label="Code from the app" autoFocus />
          )}
          <ErrorLine id="totp-off-error" error={off.isError ? errorText(off.error) : null} />
          <DialogActions>
            <Button type="submit" variant="destructive" aria-disabled={off.isPending}>
              {off.isPending ? "Turning off…" : "Turn off"}
            </Button>
          </DialogActions>
        </form>
      </Dialog>
    </Card>
  );
}

function ErrorLine({ id, error }: { id: string; error: string | null }) {
  if (!error) return null;
  return (
    <p id={id} role="alert" className="text-sm text-destructive">
      {error}
    </p>
  );
}
