"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { formatDateTime, formatDuration, formatMebibytes, toMs } from "../../lib/format";
import { newSandboxFromTemplateHref, newTemplateHref } from "../../lib/resource-links";
import { errorText, OrkestrError } from "../../lib/orkestr/errors";
import type { Template } from "../../lib/orkestr/schemas/templates";
import { templateKeys } from "../../lib/queries/templates";
import { isBuilding, templatePageQueries } from "../../lib/queries/template-pages";
import { EmptyState } from "../layout/empty-state";
import { RetryNotice } from "../layout/lazy-notices";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Button } from "../ui/button";
import { usePermission } from "../layout/permissions";
import { useRoleReason } from "../layout/use-role-reason";
import { ReadOnlyNote } from "../ui/read-only-note";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../ui/card";
import { CodeTabs } from "../ui/code-tabs";
import { CopyButton } from "../ui/copy-button";
import { Skeleton } from "../ui/skeleton";
import { BuildLogView } from "./build-log/build-log";
import type { BuildLogModel } from "./build-log/log-model";
import { useBuildLog } from "./build-log/use-build-log";
import { DeleteTemplateDialog } from "./delete-template-dialog";
import { SandboxLinks } from "./sandbox-links";
import { deleteTemplateCode, followLogCode, sandboxFromTemplateCode } from "./template-code";
import { TemplateStatusBadge } from "./template-status";
import { TeamLink as Link } from "../layout/team-link";

/** /templates/[id]: the template, its build log (live while it builds), who uses it, and its actions. */
export function TemplateDetail({ id, baseUrl }: { id: string; baseUrl: string }) {
  const template = useQuery(templatePageQueries.detail(id));
  if (template.isPending) {
    return (
      <div role="status" aria-label="Loading the template" className="flex flex-col gap-4">
        <Skeleton className="h-10 w-72" />
        <Skeleton className="h-40 w-full" />
        <Skeleton className="h-72 w-full" />
      </div>
    );
  }
  if (template.isError) {
    const gone = template.error instanceof OrkestrError && template.error.status === 404;
    if (gone) {
      return (
        <EmptyState
          title="No such template"
          description={`There is no template "${id}" in this account: it may have been deleted.`}
          action={
            <Button asChild variant="outline">
              <Link href="/templates">All templates</Link>
            </Button>
          }
        />
      );
    }
    return (
      <div className="flex flex-col gap-3">
        <RetryNotice query={template} queryKey={templateKeys.detail(id)} title="The template could not be read yet" />
        <Alert variant="destructive">
          <AlertTitle className="font-semibold">The template could not be read</AlertTitle>
          <AlertDescription className="flex flex-wrap items-center gap-3 text-foreground">
            {errorText(template.error)}
            <Button size="sm" variant="outline" onClick={() => template.refetch()}>
              Retry
            </Button>
          </AlertDescription>
        </Alert>
      </div>
    );
  }
  return <TemplateLoaded template={template.data} baseUrl={baseUrl} />;
}

function TemplateLoaded({ template, baseUrl }: { template: Template; baseUrl: string }) {
  const queryClient = useQueryClient();
  const [deleting, setDeleting] = useState(false);
  // When the build ends, status, size and timestamps change: read them again, once.
  const log = useBuildLog(template.id, () => void queryClient.invalidateQueries({ queryKey: templateKeys.all }));
  const steps = template.steps ?? [];
  const ready = template.status === "ready";
  const name = template.name ?? template.id;
  // A sandbox from it needs sandboxes.write; a new version or a delete, templates.write.
  const canUse = usePermission("sandboxes.write");
  const canWrite = usePermission("templates.write");
  const readOnly = useRoleReason("templates.write", "build or delete templates");

  return (
    <div className="flex flex-col gap-6">
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start sm:justify-between">
        <div className="flex min-w-0 flex-col gap-1">
          <h1 className="flex flex-wrap items-center gap-3 text-2xl font-semibold tracking-tight">
            <span className="truncate">{name}</span>
            <TemplateStatusBadge status={template.status} />
          </h1>
          <p className="flex items-center gap-1 font-mono text-xs text-muted-foreground">
            {template.id}
            <CopyButton
              text={template.id}
              variant="ghost"
              label="Copy id"
              announce={{ title: "Copied the template id", description: template.id }}
              className="h-6 px-1.5 text-xs"
            />
          </p>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          {ready && canUse ? (
            <Button asChild>
              <Link href={newSandboxFromTemplateHref(template.id)}>Create sandbox from this</Link>
            </Button>
          ) : null}
          {canWrite ? (
            <>
              <Button asChild variant="outline">
                <Link href={newTemplateHref(template.id)} title="Templates are immutable: this builds a new one">
                  Edit as new template
                </Link>
              </Button>
              <Button variant="outline" className="text-destructive" onClick={() => setDeleting(true)}>
                Delete
              </Button>
            </>
          ) : (
            <ReadOnlyNote className="max-w-sm">{readOnly}</ReadOnlyNote>
          )}
        </div>
      </div>

      <FailureSummary template={template} model={log.model} />

      <div className="grid gap-6 lg:grid-cols-3">
        <Card className="lg:col-span-2">
          <CardHeader>
            <CardTitle>Build log</CardTitle>
            <CardDescription>
              Each step&apos;s output as it runs: <span className="font-semibold">err</span> marks standard error.
            </CardDescription>
          </CardHeader>
          <CardContent>
            <BuildLogView model={log.model} version={log.version} state={log.state} steps={steps} />
          </CardContent>
        </Card>
        <div className="flex flex-col gap-6">
          <Overview template={template} />
          <UsedBy template={template} />
        </div>
      </div>

      <Card>
        <CardHeader>
          <CardTitle>As code</CardTitle>
          <CardDescription>Each action on this template with the SDKs or curl.</CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-4">
          <CodeSection title="Follow the build log" snippets={followLogCode(template.id, baseUrl)} testId="code-logs" />
          <CodeSection
            title="Create a sandbox from this template"
            snippets={sandboxFromTemplateCode(template.id, baseUrl)}
            testId="code-sandbox"
          />
          <CodeSection
            title="Delete the template"
            snippets={deleteTemplateCode(template.id, baseUrl)}
            testId="code-delete"
          />
        </CardContent>
      </Card>

      {canWrite ? (
        <DeleteTemplateDialog template={deleting ? template : null} onClose={() => setDeleting(false)} />
      ) : null}
    </div>
  );
}

function CodeSection({
  title,
  snippets,
  testId,
}: {
  title: string;
  snippets: Parameters<typeof CodeTabs>[0]["snippets"];
  testId: string;
}) {
  return (
    <details className="rounded-md border px-3 py-2 text-sm">
      <summary className="cursor-pointer font-medium">{title}</summary>
      <div className="pt-3">
        <CodeTabs snippets={snippets} testId={testId} />
      </div>
    </details>
  );
}

/** A failed build, said first: which step, its exit code, and the tail of its output. */
function FailureSummary({ template, model }: { template: Template; model: BuildLogModel }) {
  const failure = model.failure();
  if (template.status !== "failed" && !failure) return null;
  const steps = template.steps ?? [];
  const fromTemplate = typeof template.error === "object" && template.error ? template.error : null;
  const stepIndex = failure?.stepIndex ?? fromTemplate?.step_index ?? null;
  const exitCode = failure?.exitCode ?? fromTemplate?.exit_code ?? null;
  const step = failure?.step ?? fromTemplate?.step ?? (stepIndex === null ? null : steps[stepIndex]);
  const title =
    stepIndex === null
      ? "The build failed"
      : `Step ${stepIndex + 1} of ${steps.length} failed${exitCode === null ? "" : ` with exit code ${exitCode}`}`;
  return (
    <Alert variant="destructive" data-testid="build-failure">
      {/* The destructive title colour on this tint falls under 4.5:1 in the light theme (axe): the
          border, tint and role say "failed"; the title reads in the normal text colour, bold. */}
      <AlertTitle className="font-semibold">{title}</AlertTitle>
      <AlertDescription className="flex flex-col gap-2 text-foreground">
        {step ? (
          <p>
            <code className="rounded bg-muted px-1.5 py-0.5 font-mono text-xs">{step}</code>
          </p>
        ) : null}
        {failure?.tailHtml ? (
          <>
            <p className="text-xs font-medium">The end of its output:</p>
            <pre
              className="max-h-48 overflow-auto rounded-md border bg-background p-2 font-mono text-xs whitespace-pre-wrap"
              tabIndex={0}
              aria-label="The end of the failing step's output"
              data-testid="failure-tail"
              // Escaped by build-log/ansi.ts: the build's text cannot add markup.
              dangerouslySetInnerHTML={{ __html: failure.tailHtml }}
            />
          </>
        ) : typeof template.error === "string" ? (
          <p>{template.error}</p>
        ) : null}
        <p className="text-xs">
          Templates are immutable: fix the step and build again with{" "}
          <Link href={newTemplateHref(template.id)} className="font-medium underline underline-offset-4">
            Edit as new template
          </Link>
          {stepIndex !== null ? (
            <>
              , or{" "}
              <a href={`#build-step-${stepIndex + 1}`} className="font-medium underline underline-offset-4">
                see the step in the log
              </a>
            </>
          ) : null}
          .
        </p>
      </AlertDescription>
    </Alert>
  );
}

function Overview({ template }: { template: Template }) {
  const steps = template.steps ?? [];
  const envKeys = ((template as { env_keys?: unknown }).env_keys as string[] | undefined) ?? [];
  const started = toMs((template as { started_at?: string | null }).started_at);
  const finished = toMs((template as { finished_at?: string | null }).finished_at);
  return (
    <Card>
      <CardHeader>
        <CardTitle>Details</CardTitle>
      </CardHeader>
      <CardContent>
        <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
          <dt className="text-muted-foreground">Base image</dt>
          <dd className="font-mono text-xs">{template.base_image ?? "—"}</dd>
          <dt className="text-muted-foreground">Size</dt>
          <dd>{formatMebibytes(template.size_mb)}</dd>
          <dt className="text-muted-foreground">Created</dt>
          <dd className="tabular-nums">{formatDateTime(template.created_at)}</dd>
          <dt className="text-muted-foreground">Build time</dt>
          <dd>
            {started !== null && finished !== null
              ? formatDuration(finished - started) === "0s"
                ? `${finished - started} ms`
                : formatDuration(finished - started)
              : isBuilding(template)
                ? "building…"
                : "—"}
          </dd>
          <dt className="text-muted-foreground">Env</dt>
          <dd className="font-mono text-xs">{envKeys.length ? envKeys.join(", ") : "none"}</dd>
        </dl>
        <h3 className="mt-4 mb-1 text-sm font-medium">Steps</h3>
        {steps.length ? (
          <ol className="flex list-decimal flex-col gap-1 pl-5 font-mono text-xs">
            {steps.map((s, i) => (
              <li key={i} className="break-all">
                {s}
              </li>
            ))}
          </ol>
        ) : (
          <p className="text-sm text-muted-foreground">No steps: the base image as it is.</p>
        )}
      </CardContent>
    </Card>
  );
}

function UsedBy({ template }: { template: Template }) {
  const users = useQuery(templatePageQueries.users(template.id));
  return (
    <Card>
      <CardHeader>
        <CardTitle>Used by</CardTitle>
        <CardDescription>Live sandboxes running this template.</CardDescription>
      </CardHeader>
      <CardContent className="text-sm" data-testid="template-users">
        {users.isPending ? (
          <Skeleton className="h-5 w-40" />
        ) : users.isError ? (
          <p className="text-muted-foreground">Could not be read: {errorText(users.error)}</p>
        ) : (
          <SandboxLinks sandboxes={users.data} max={10} />
        )}
      </CardContent>
    </Card>
  );
}
