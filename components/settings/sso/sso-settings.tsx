"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { errorText, OrkestrError } from "../../../lib/orkestr/errors";
import { ssoKeys, ssoMutations, ssoQueries } from "../../../lib/queries/sso";
import { isSsoErrorCode, ssoMessage } from "../../../lib/sso-messages";
import type { SsoSettings } from "../../../lib/validations/sso";
import { cn } from "../../../lib/utils";
import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Badge } from "../../ui/badge";
import { Button } from "../../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { CopyButton } from "../../ui/copy-button";
import { Dialog, DialogActions } from "../../ui/dialog";
import { Input } from "../../ui/input";
import { Label } from "../../ui/label";
import { PendingDomains } from "./pending-domains";

type MappedRole = "admin" | "member" | "viewer";
interface Row {
  key: number;
  group: string;
  role: MappedRole;
}

const SESSION_HOURS = { min: 1, max: 720 };
const SELECT =
  "flex h-9 w-full rounded-md border border-input bg-background px-3 py-1 text-sm shadow-xs disabled:cursor-not-allowed disabled:opacity-50";
const list = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** Settings → SSO: the team's OpenID Connect provider, its test sign-in, enforcement and removal. */
export function SsoSettingsView({ initial, testOutcome }: { initial: SsoSettings; testOutcome: string | null }) {
  const queryClient = useQueryClient();
  const settings = useQuery({ ...ssoQueries.settings(), initialData: initial });
  const data = settings.data;
  const c = data.config;
  const ids = useId();
  const [issuer, setIssuer] = useState(c?.issuer ?? "");
  const [clientId, setClientId] = useState(c?.client_id ?? "");
  const [secret, setSecret] = useState("");
  const [domains, setDomains] = useState(data.domains.map((d) => d.domain).join(", "));
  const [defaultRole, setDefaultRole] = useState<"member" | "viewer">(c?.default_role ?? "member");
  const [groupClaim, setGroupClaim] = useState(c?.group_claim ?? "groups");
  const [rows, setRows] = useState<Row[]>((c?.group_role_map ?? []).map((r, i) => ({ key: i, ...r })));
  const [allowed, setAllowed] = useState((c?.allowed_groups ?? []).join(", "));
  const [groupSync, setGroupSync] = useState(c?.group_sync ?? false);
  const [hours, setHours] = useState(String(c?.session_max_hours ?? 12));
  const [enforced, setEnforced] = useState(c?.enforced ?? false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [confirmRemove, setConfirmRemove] = useState(false);
  const [nextKey, setNextKey] = useState(rows.length);

  const sameIdp =
    c !== null && c.issuer === issuer.trim().replace(/\/+$/, "") && c.client_id === clientId.trim() && !secret;
  const canEnforce = sameIdp && c?.tested_at != null;

  const save = useMutation({
    mutationFn: () =>
      ssoMutations.save({
        issuer: issuer.trim(),
        client_id: clientId.trim(),
        ...(secret ? { client_secret: secret } : {}),
        domains: list(domains),
        default_role: defaultRole,
        group_claim: groupClaim.trim() || null,
        group_role_map: rows.filter((r) => r.group.trim()).map((r) => ({ group: r.group.trim(), role: r.role })),
        allowed_groups: list(allowed),
        group_sync: groupSync,
        session_max_hours: Number(hours),
        enforced: enforced && canEnforce,
      }),
    onMutate: () => {
      setErrors({});
      setFormError(null);
      setSaved(false);
    },
    onSuccess: (next) => {
      queryClient.setQueryData(ssoKeys.settings(), next);
      // New domains wait for the instance owner: their list (below, for the instance owner) changed too.
      void queryClient.invalidateQueries({ queryKey: ssoKeys.domains() });
      setSecret("");
      setSaved(true);
    },
    onError: (error) => {
      setFormError(errorText(error));
      const body = error instanceof OrkestrError ? (error.body as { errors?: Record<string, string> } | null) : null;
      if (body?.errors) setErrors(body.errors);
    },
  });
  const test = useMutation({
    mutationFn: ssoMutations.startTest,
    onSuccess: ({ url }) => window.location.assign(url),
  });
  const remove = useMutation({
    mutationFn: ssoMutations.remove,
    onSuccess: async () => {
      setConfirmRemove(false);
      await queryClient.invalidateQueries({ queryKey: ssoKeys.all });
      window.location.reload();
    },
  });

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const field = (name: string) => ({
    "aria-invalid": errors[name] ? true : undefined,
    "aria-describedby": errors[name] ? `${ids}-${name}-error` : undefined,
  });
  const fieldError = (name: string) =>
    errors[name] ? (
      <p id={`${ids}-${name}-error`} className="text-sm text-destructive">
        {errors[name]}
      </p>
    ) : null;
  const last = c?.last_test ?? null;

  return (
    <div className="flex flex-col gap-6">
      {testOutcome && last ? (
        <Alert variant={last.ok && !last.code ? "default" : "destructive"} data-testid="sso-test-result">
          <AlertTitle>{last.ok ? "Test sign-in went through" : "Test sign-in failed"}</AlertTitle>
          <AlertDescription>
            {last.ok
              ? `The IdP signed in ${last.email} (subject ${last.subject}); groups: ${last.groups?.length ? last.groups.join(", ") : "none sent"}; they would get the role ${last.role}.`
              : null}{" "}
            {last.detail ?? (last.code && isSsoErrorCode(last.code) ? ssoMessage(last.code) : null)}
          </AlertDescription>
        </Alert>
      ) : null}

      <Card>
        <CardHeader>
          <CardTitle>Redirect URI</CardTitle>
          <CardDescription>
            Register this as the redirect (callback) URI of Baton&apos;s client at your identity provider.
          </CardDescription>
        </CardHeader>
        <CardContent className="flex flex-wrap items-center gap-3">
          <code className="rounded bg-muted px-2 py-1 text-sm break-all" data-testid="sso-redirect-uri">
            {data.redirect_uri}
          </code>
          <CopyButton text={data.redirect_uri} label="Copy redirect URI" />
        </CardContent>
      </Card>

      <form onSubmit={onSubmit} noValidate className="flex flex-col gap-6" aria-label="SSO settings">
        <Card>
          <CardHeader>
            <CardTitle>Identity provider</CardTitle>
            <CardDescription>
              OpenID Connect: Baton reads the rest from the issuer&apos;s discovery document. The client secret is kept
              encrypted and never shown again.
            </CardDescription>
          </CardHeader>
          <CardContent className="grid gap-4 sm:grid-cols-2">
            <div className="flex flex-col gap-2 sm:col-span-2">
              <Label htmlFor={`${ids}-issuer`}>Issuer URL</Label>
              <Input
                id={`${ids}-issuer`}
                value={issuer}
                onChange={(e) => setIssuer(e.target.value)}
                placeholder="https://login.example.com/realms/acme"
                required
                {...field("issuer")}
              />
              {fieldError("issuer")}
            </div>
            <div className="flex flex-col gap-2">
              <Label htmlFor={`${ids}-client`}>Client ID</Label>
              <Input
                id={`${ids}-client`}
                value={clientId}
                onChange={(e) => setClientId(e.target.value)}
                required
                {...field("client_id")}
              />
              {fieldError("client_id")}
            </div>
            <div className="flex flex-col gap-2">
              <Label htmlFor={`${ids}-secret`}>
                Client secret{" "}
                <span className="text-muted-foreground" data-testid="sso-secret-state">
                  ({c?.client_secret_set ? "set" : "not set"})
                </span>
              </Label>
              <Input
                id={`${ids}-secret`}
                type="password"
                autoComplete="off"
                value={secret}
                onChange={(e) => setSecret(e.target.value)}
                placeholder={c?.client_secret_set ? "Leave empty to keep the current secret" : ""}
                {...field("client_secret")}
              />
            </div>
            <div className="flex flex-col gap-2 sm:col-span-2">
              <Label htmlFor={`${ids}-domains`}>Email domains</Label>
              <Input
                id={`${ids}-domains`}
                value={domains}
                onChange={(e) => setDomains(e.target.value)}
                placeholder="acme.com, acme.io"
                aria-describedby={`${ids}-domains-help`}
                aria-invalid={errors.domains ? true : undefined}
              />
              <p id={`${ids}-domains-help`} className="text-sm text-muted-foreground">
                People with these addresses may sign in with SSO. A domain belongs to one team, and is enforced only
                after the instance owner approves it.
              </p>
              {fieldError("domains")}
              {data.domains.length ? (
                <ul className="flex flex-wrap gap-2" aria-label="Domain approval">
                  {data.domains.map((d) => (
                    <li key={d.domain}>
                      <Badge variant={d.approved ? "success" : "warning"}>
                        {d.domain}: {d.approved ? "approved" : "waiting for the instance owner"}
                      </Badge>
                    </li>
                  ))}
                </ul>
              ) : null}
            </div>
          </CardContent>
        </Card>

        <Card>
          <CardHeader>
            <CardTitle>Roles and groups</CardTitle>
            <CardDescription>
              A new person gets the highest role a group of theirs maps to, else the default role. Owners are never
              changed by the IdP.
            </CardDescription>
          </CardHeader>
          <CardContent className="flex flex-col gap-4">
            <div className="grid gap-4 sm:grid-cols-2">
              <div className="flex flex-col gap-2">
                <Label htmlFor={`${ids}-default-role`}>Default role</Label>
                <select
                  id={`${ids}-default-role`}
                  className={SELECT}
                  value={defaultRole}
                  onChange={(e) => setDefaultRole(e.target.value as "member" | "viewer")}
                >
                  <option value="member">member</option>
                  <option value="viewer">viewer</option>
                </select>
              </div>
              <div className="flex flex-col gap-2">
                <Label htmlFor={`${ids}-claim`}>Group claim</Label>
                <Input
                  id={`${ids}-claim`}
                  value={groupClaim}
                  onChange={(e) => setGroupClaim(e.target.value)}
                  placeholder="groups"
                  {...field("group_claim")}
                />
                {fieldError("group_claim")}
              </div>
            </div>
            <fieldset className="flex flex-col gap-2">
              <legend className="mb-2 text-sm font-medium">Group → role</legend>
              {rows.length === 0 ? (
                <p className="text-sm text-muted-foreground">No mapping: everyone gets the default role.</p>
              ) : null}
              {rows.map((row, i) => (
                <div key={row.key} className="flex flex-wrap items-center gap-2">
                  <Input
                    aria-label={`Group ${i + 1}`}
                    className="min-w-40 flex-1"
                    value={row.group}
                    onChange={(e) =>
                      setRows(rows.map((r) => (r.key === row.key ? { ...r, group: e.target.value } : r)))
                    }
                  />
                  <select
                    aria-label={`Role for group ${i + 1}`}
                    className={cn(SELECT, "w-32")}
                    value={row.role}
                    onChange={(e) =>
                      setRows(rows.map((r) => (r.key === row.key ? { ...r, role: e.target.value as MappedRole } : r)))
                    }
                  >
                    <option value="admin">admin</option>
                    <option value="member">member</option>
                    <option value="viewer">viewer</option>
                  </select>
                  <Button
                    type="button"
                    variant="outline"
                    size="sm"
                    onClick={() => setRows(rows.filter((r) => r.key !== row.key))}
                  >
                    Remove<span className="sr-only"> group {i + 1}</span>
                  </Button>
                </div>
              ))}
              {fieldError("group_role_map")}
              <div>
                <Button
                  type="button"
                  variant="outline"
                  size="sm"
                  onClick={() => {
                    setRows([...rows, { key: nextKey, group: "", role: "member" }]);
                    setNextKey(nextKey + 1);
                  }}
                >
                  Add a group mapping
                </Button>
              </div>
            </fieldset>
            <div className="flex flex-col gap-2">
              <Label htmlFor={`${ids}-allowed`}>Allowed groups</Label>
              <Input
                id={`${ids}-allowed`}
                value={allowed}
                onChange={(e) => setAllowed(e.target.value)}
                aria-describedby={`${ids}-allowed-help`}
              />
              <p id={`${ids}-allowed-help`} className="text-sm text-muted-foreground">
                Empty: anyone with a team domain may join. Otherwise only members of these groups; without a group claim
                the sign-in is refused, and someone no longer in one is removed at their next sign-in.
              </p>
            </div>
            <label className="flex items-start gap-2 text-sm">
              <input
                type="checkbox"
                className="mt-1 size-4"
                checked={groupSync}
                onChange={(e) => setGroupSync(e.target.checked)}
              />
              <span>
                Sync roles from groups at every sign-in (roles are then read-only in Baton: a group change at the IdP
                raises or lowers the role at the next sign-in).
              </span>
            </label>
          </CardContent>
        </Card>

        <Card>
          <CardHeader>
            <CardTitle>Sessions and enforcement</CardTitle>
          </CardHeader>
          <CardContent className="flex flex-col gap-4">
            <div className="flex max-w-xs flex-col gap-2">
              <Label htmlFor={`${ids}-hours`}>Session maximum (hours)</Label>
              <Input
                id={`${ids}-hours`}
                type="number"
                inputMode="numeric"
                min={SESSION_HOURS.min}
                max={SESSION_HOURS.max}
                value={hours}
                onChange={(e) => setHours(e.target.value)}
                aria-describedby={`${ids}-hours-help`}
                aria-invalid={errors.session_max_hours ? true : undefined}
              />
              <p id={`${ids}-hours-help`} className="text-sm text-muted-foreground">
                An SSO session ends after this long, so someone removed at the IdP cannot stay signed in.
              </p>
              {fieldError("session_max_hours")}
            </div>
            <label className="flex items-start gap-2 text-sm">
              <input
                type="checkbox"
                className="mt-1 size-4"
                checked={enforced && canEnforce}
                disabled={!canEnforce}
                onChange={(e) => setEnforced(e.target.checked)}
                aria-describedby={`${ids}-enforce-help`}
                data-testid="sso-enforce"
              />
              <span>
                Require SSO for everyone with an approved team domain (the owner keeps password sign-in as break-glass)
              </span>
            </label>
            <p id={`${ids}-enforce-help`} className="text-sm text-muted-foreground">
              {canEnforce
                ? `Last successful test sign-in: ${new Date(c!.tested_at!).toLocaleString()}.`
                : "Save, then run a successful Test sign-in with these settings before enforcing."}
            </p>
            {fieldError("enforced")}
          </CardContent>
        </Card>

        {formError ? (
          <Alert variant="destructive">
            <AlertTitle>Not saved</AlertTitle>
            <AlertDescription>{formError}</AlertDescription>
          </Alert>
        ) : saved ? (
          <p role="status" className="text-sm text-muted-foreground" data-testid="sso-saved">
            Saved.
          </p>
        ) : null}
        <div className="flex flex-wrap gap-3">
          <Button type="submit" disabled={save.isPending}>
            {save.isPending ? "Saving…" : "Save"}
          </Button>
          <Button
            type="button"
            variant="outline"
            disabled={!c || !sameIdp || test.isPending}
            onClick={() => test.mutate()}
          >
            {test.isPending ? "Opening the IdP…" : "Test sign-in"}
          </Button>
          {c ? (
            <Button type="button" variant="destructive" onClick={() => setConfirmRemove(true)}>
              Remove SSO
            </Button>
          ) : null}
        </div>
        {test.isError ? (
          <p role="alert" className="text-sm text-destructive">
            {errorText(test.error)}
          </p>
        ) : null}
      </form>

      {data.is_instance_owner ? <PendingDomains /> : null}

      <Dialog
        open={confirmRemove}
        onOpenChange={setConfirmRemove}
        title="Remove SSO?"
        description="The issuer, client secret and domains are deleted and SSO is no longer enforced. People who joined through SSO stay members, but cannot sign in until SSO is set up again (or they set a password)."
      >
        {remove.isError ? (
          <p role="alert" className="text-sm text-destructive">
            {errorText(remove.error)}
          </p>
        ) : null}
        <DialogActions cancelDisabled={remove.isPending}>
          <Button variant="destructive" onClick={() => remove.mutate()} disabled={remove.isPending}>
            {remove.isPending ? "Removing…" : "Remove SSO"}
          </Button>
        </DialogActions>
      </Dialog>
    </div>
  );
}
