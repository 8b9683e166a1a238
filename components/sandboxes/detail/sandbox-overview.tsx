"use client";

import { useCreatedVia } from "./created-via";
import { useId, type ReactNode } from "react";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { Card, CardContent, CardHeader, CardTitle } from "../../ui/card";
import { formatDateTime, formatDuration, formatMebibytes } from "../../../lib/format";
import { LiveMetrics } from "./live-metrics";
import { MetadataEditor } from "./metadata-editor";
import { useSandbox } from "./sandbox-context";
import { useSandboxEdits } from "../../../lib/queries/sandbox-lifecycle";
import { isFinished } from "../../../lib/sandbox-status";
import { snapshotHref } from "../../../lib/resource-links";
import { creatorOf, sandboxesByCreatorHref } from "../../../lib/sandbox-creator";
import { ReadOnlyNote } from "../../ui/read-only-note";
import { usePermissions } from "../../layout/permissions";
import { useSandboxAccess } from "./use-sandbox-access";
import { TeamLink as Link } from "../../layout/team-link";

function Field({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) {
  return (
    <div className="flex flex-col gap-0.5">
      <dt className="text-xs text-muted-foreground">{label}</dt>
      <dd className="text-sm break-words" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

function volumeText(volume: Sandbox["volume"]): string {
  if (!volume) return "None";
  if (typeof volume === "string") return `${volume} at /persist`;
  return `${volume.name ?? volume.id ?? "volume"} at ${volume.mount_path ?? "/persist"}`;
}

/** Settings the API lets us change after create (PATCH): auto_resume and on_timeout. */
function AfterCreateSettings({
  sandbox,
  editable,
  readOnly,
}: {
  sandbox: Sandbox;
  editable: boolean;
  /** Why the role may not change them (shown, and named by the disabled controls), or null. */
  readOnly: string | null;
}) {
  const { updateSettings } = useSandboxEdits(sandbox.id);
  const disabled = !editable || readOnly !== null || updateSettings.isPending;
  const noteId = useId();
  const describedBy = readOnly ? noteId : undefined;
  return (
    <div className="flex flex-col gap-3 text-sm">
      <label className="flex items-center gap-2">
        <input
          type="checkbox"
          className="size-4 accent-primary"
          checked={!!sandbox.auto_resume}
          disabled={disabled}
          aria-describedby={describedBy}
          onChange={(e) => updateSettings.mutate({ auto_resume: e.target.checked })}
        />
        Resume automatically on exec, file or preview traffic (auto_resume)
      </label>
      <label className="flex flex-wrap items-center gap-2">
        When the countdown ends:
        <select
          className="h-8 rounded-md border border-input bg-background px-2 text-sm disabled:opacity-50"
          value={sandbox.on_timeout ?? "kill"}
          disabled={disabled}
          aria-describedby={describedBy}
          onChange={(e) => updateSettings.mutate({ on_timeout: e.target.value === "pause" ? "pause" : "kill" })}
        >
          <option value="kill">terminate</option>
          <option value="pause">pause</option>
        </select>
      </label>
      {readOnly ? <ReadOnlyNote id={noteId}>{readOnly}</ReadOnlyNote> : null}
    </div>
  );
}

/** Who created the sandbox through Baton (its creator stamp), linking to all they created. */
function CreatedBy({ sandbox }: { sandbox: Sandbox }) {
  const { userId } = usePermissions();
  const via = useCreatedVia();
  const creator = creatorOf(sandbox.metadata);
  if (!creator) return <>Not recorded (made outside Baton)</>;
  return (
    <>
      <Link href={sandboxesByCreatorHref(creator)} className="underline underline-offset-4">
        {creator === userId ? "You" : <span className="font-mono">{creator}</span>}
      </Link>
      {via ? <span data-testid="created-via"> {via}</span> : null}
    </>
  );
}

/** The Overview tab: every field of the sandbox, its metadata and settings, and the live charts. */
export function SandboxOverview() {
  const { data: sandbox } = useSandbox();
  const { canChange, whyNot } = useSandboxAccess();
  const gone = isFinished(sandbox.status);
  const envKeys = sandbox.env_keys ?? [];
  return (
    <div className="flex flex-col gap-6">
      <LiveMetrics id={sandbox.id} status={sandbox.status} />
      <Card>
        <CardHeader>
          <CardTitle>Details</CardTitle>
        </CardHeader>
        <CardContent>
          <dl className="grid grid-cols-1 gap-x-6 gap-y-4 sm:grid-cols-2 lg:grid-cols-3">
            <Field label="Status" testId="field-status">
              {sandbox.status}
              {sandbox.status_reason ? ` (${sandbox.status_reason})` : ""}
            </Field>
            <Field label="Template" testId="field-template">
              <span className="font-mono">{sandbox.template ?? "—"}</span>
              {sandbox.snapshot ? (
                <span className="text-muted-foreground">
                  {" "}
                  · forked from{" "}
                  <Link href={snapshotHref(sandbox.snapshot)} className="underline underline-offset-4">
                    {sandbox.snapshot}
                  </Link>
                </span>
              ) : null}
            </Field>
            <Field label="Size" testId="field-size">
              {sandbox.size ?? "—"}
              {sandbox.cpu != null || sandbox.memory_mb != null ? (
                <span className="text-muted-foreground">
                  {" "}
                  ·{" "}
                  {[
                    sandbox.cpu != null ? `${sandbox.cpu} vCPU` : null,
                    sandbox.memory_mb != null ? formatMebibytes(sandbox.memory_mb) : null,
                  ]
                    .filter(Boolean)
                    .join(" / ")}
                </span>
              ) : null}
            </Field>
            <Field label="Region" testId="field-region">
              {sandbox.region ?? "—"}
            </Field>
            <Field label="Network" testId="field-network">
              {sandbox.network ?? "off"}
              {sandbox.network === "restricted" ? (
                <span className="text-muted-foreground">
                  {" "}
                  ·{" "}
                  {sandbox.allow_domains?.length
                    ? `${sandbox.allow_domains.length} allowed domains`
                    : "default allowlist"}
                </span>
              ) : null}
            </Field>
            <Field label="Volume">{volumeText(sandbox.volume)}</Field>
            <Field label="Timeout" testId="field-timeout">
              {sandbox.timeout_seconds != null ? formatDuration(sandbox.timeout_seconds * 1000) : "—"} · then{" "}
              {sandbox.on_timeout === "pause" ? "pause" : "terminate"}
            </Field>
            <Field label="Auto-resume">{sandbox.auto_resume ? "on" : "off"}</Field>
            <Field label="Preview auth">{sandbox.preview_auth ? "token required" : "public URLs"}</Field>
            <Field label="Created">{formatDateTime(sandbox.created_at)}</Field>
            <Field label="Created by" testId="field-creator">
              <CreatedBy sandbox={sandbox} />
            </Field>
            <Field label="Started">{formatDateTime(sandbox.started_at)}</Field>
            <Field label="Expires">{sandbox.status === "running" ? formatDateTime(sandbox.expires_at) : "—"}</Field>
            {sandbox.paused_at ? <Field label="Paused">{formatDateTime(sandbox.paused_at)}</Field> : null}
            {sandbox.terminated_at ? <Field label="Terminated">{formatDateTime(sandbox.terminated_at)}</Field> : null}
            {sandbox.preview_host_base ? (
              <Field label="Preview host">
                <span className="font-mono">&lt;port&gt;-{sandbox.preview_host_base}</span>
              </Field>
            ) : null}
          </dl>
          {sandbox.network === "restricted" && sandbox.allow_domains?.length ? (
            <div className="mt-4 flex flex-col gap-1.5">
              <h3 className="text-xs text-muted-foreground">Allowed domains</h3>
              <ul className="flex flex-wrap gap-1.5" aria-label="Allowed domains">
                {sandbox.allow_domains.map((d) => (
                  <li key={d} className="rounded-md border bg-muted/50 px-2 py-0.5 font-mono text-xs">
                    {d}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
          <div className="mt-4 flex flex-col gap-1.5">
            <h3 className="text-xs text-muted-foreground">
              Environment variables (names only: values are never returned)
            </h3>
            {envKeys.length ? (
              <ul className="flex flex-wrap gap-1.5" aria-label="Environment variable names" data-testid="env-keys">
                {envKeys.map((k) => (
                  <li key={k} className="rounded-md border bg-muted/50 px-2 py-0.5 font-mono text-xs">
                    {k}
                  </li>
                ))}
              </ul>
            ) : (
              <p className="text-sm text-muted-foreground">None</p>
            )}
          </div>
        </CardContent>
      </Card>
      <div className="grid gap-6 lg:grid-cols-2">
        <Card>
          <CardHeader>
            <CardTitle>Metadata</CardTitle>
          </CardHeader>
          <CardContent>
            <MetadataEditor sandbox={sandbox} editable={!gone && canChange} />
            {!gone && !canChange ? <ReadOnlyNote className="mt-3">{whyNot("edit metadata")}</ReadOnlyNote> : null}
          </CardContent>
        </Card>
        <Card>
          <CardHeader>
            <CardTitle>Settings</CardTitle>
          </CardHeader>
          <CardContent>
            <AfterCreateSettings
              sandbox={sandbox}
              editable={!gone}
              readOnly={gone ? null : whyNot("change these settings")}
            />
          </CardContent>
        </Card>
      </div>
    </div>
  );
}
