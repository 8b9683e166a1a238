"use client";

import { useQuery } from "@tanstack/react-query";
import { formatDateTime, formatMebibytes } from "../../lib/format";
import { newTemplateHref, templateHref } from "../../lib/resource-links";
import { errorText } from "../../lib/orkestr/errors";
import type { Sandbox } from "../../lib/orkestr/schemas/sandboxes";
import type { Template } from "../../lib/orkestr/schemas/templates";
import { sandboxQueries } from "../../lib/queries/sandboxes";
import { templateKeys, templateQueries } from "../../lib/queries/templates";
import {
  BUILDING_POLL_MS,
  isBuilding,
  sandboxesByTemplate,
  templatePageQueries,
} from "../../lib/queries/template-pages";
import { EmptyState } from "../layout/empty-state";
import { RetryNotice } from "../layout/lazy-notices";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { Badge } from "../ui/badge";
import { Button } from "../ui/button";
import { usePermission } from "../layout/permissions";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../ui/card";
import { CodeTabs } from "../ui/code-tabs";
import { Skeleton } from "../ui/skeleton";
import { SandboxLinks } from "./sandbox-links";
import { listTemplatesCode } from "./template-code";
import { TemplateStatusBadge } from "./template-status";
import { TableScroll } from "../ui/table";
import { TeamLink as Link } from "../layout/team-link";

/** /templates: the custom templates (with the sandboxes using each), then the built-in base images. */
export function TemplatesList({ baseUrl }: { baseUrl: string }) {
  return (
    <div className="flex flex-col gap-6">
      <CustomTemplates />
      <BaseImages />
      <details className="rounded-lg border px-4 py-3 text-sm">
        <summary className="cursor-pointer font-medium">List templates as code</summary>
        <div className="pt-3">
          <CodeTabs snippets={listTemplatesCode(baseUrl)} testId="list-code" />
        </div>
      </details>
    </div>
  );
}

function CustomTemplates() {
  // Creating one needs templates.write: the page header says why when the role lacks it.
  const canCreate = usePermission("templates.write");
  // Custom ones only: the built-ins have their own section, from GET /v1/base-images.
  const query = { include_builtin: false };
  const templates = useQuery({
    ...templateQueries.list(query),
    // A build in progress changes status and size on its own: re-read until none is left.
    staleTime: 0,
    refetchInterval: (q) => (q.state.data?.some(isBuilding) ? BUILDING_POLL_MS : false),
  });
  const users = useQuery(templatePageQueries.users(null));
  const limits = useQuery(sandboxQueries.limits());
  const byTemplate = sandboxesByTemplate(users.data);
  const cap = limits.data?.max_templates;
  const used = limits.data?.templates;

  return (
    <Card>
      <CardHeader className="flex flex-row flex-wrap items-start justify-between gap-2">
        <div className="flex flex-col gap-1">
          <CardTitle>Custom templates</CardTitle>
          <CardDescription>
            A base image plus shell steps, built once; sandboxes then start with everything the steps installed.
            Templates are immutable: to change one, build a new one from it.
          </CardDescription>
        </div>
        {typeof cap === "number" && typeof used === "number" ? (
          <Badge variant={used >= cap ? "warning" : "neutral"} data-testid="template-cap">
            {used} of {cap} templates
          </Badge>
        ) : null}
      </CardHeader>
      <CardContent className="flex flex-col gap-3">
        <RetryNotice query={templates} queryKey={templateKeys.list(query)} title="Templates could not be listed yet" />
        {templates.isPending ? (
          <div role="status" aria-label="Loading templates" className="flex flex-col gap-2">
            <Skeleton className="h-10 w-full" />
            <Skeleton className="h-10 w-full" />
            <Skeleton className="h-10 w-full" />
          </div>
        ) : templates.isError ? (
          <Alert variant="destructive">
            <AlertTitle className="font-semibold">Templates could not be listed</AlertTitle>
            <AlertDescription className="flex flex-wrap items-center gap-3 text-foreground">
              {errorText(templates.error)}
              <Button size="sm" variant="outline" onClick={() => templates.refetch()}>
                Retry
              </Button>
            </AlertDescription>
          </Alert>
        ) : templates.data.length === 0 ? (
          <EmptyState
            title="No custom templates yet"
            description="Bake what every sandbox needs (packages, tools, files) into a template, so a sandbox starts ready instead of installing it each time."
            action={
              canCreate ? (
                <Button asChild>
                  <Link href={newTemplateHref()}>Create template</Link>
                </Button>
              ) : null
            }
          />
        ) : (
          <>
            {users.isError ? (
              <p className="text-sm text-muted-foreground" role="status">
                Which sandboxes use each template could not be read: {errorText(users.error)}
              </p>
            ) : null}
            <TemplateTable
              templates={templates.data}
              usersOf={(t) => (users.data ? (byTemplate.get(t.id) ?? []) : null)}
            />
          </>
        )}
      </CardContent>
    </Card>
  );
}

function TemplateTable({ templates, usersOf }: { templates: Template[]; usersOf: (t: Template) => Sandbox[] | null }) {
  return (
    <TableScroll>
      <table className="w-full text-sm" data-testid="template-table">
        <caption className="sr-only">Your custom templates</caption>
        <thead className="text-left text-xs text-muted-foreground">
          <tr className="border-b">
            <th scope="col" className="py-2 pr-4 font-medium">
              Name
            </th>
            <th scope="col" className="py-2 pr-4 font-medium">
              Build
            </th>
            <th scope="col" className="py-2 pr-4 font-medium">
              Status
            </th>
            <th scope="col" className="py-2 pr-4 text-right font-medium">
              Size
            </th>
            <th scope="col" className="py-2 pr-4 font-medium">
              Created
            </th>
            <th scope="col" className="py-2 font-medium">
              Used by
            </th>
          </tr>
        </thead>
        <tbody>
          {templates.map((t) => {
            const users = usersOf(t);
            const steps = t.steps ?? [];
            return (
              <tr
                key={t.id}
                className="border-b align-top last:border-0"
                data-testid="template-row"
                data-name={t.name ?? ""}
              >
                <td className="py-2 pr-4">
                  <Link
                    href={templateHref(t.id)}
                    className="font-medium text-primary underline-offset-4 hover:underline"
                  >
                    {t.name ?? t.id}
                  </Link>
                  <div className="max-w-48 truncate font-mono text-xs text-muted-foreground" title={t.id}>
                    {t.id}
                  </div>
                </td>
                <td className="max-w-56 py-2 pr-4">
                  <span className="font-mono text-xs">{t.base_image ?? "—"}</span>
                  <span className="text-muted-foreground">
                    {" · "}
                    {steps.length} step{steps.length === 1 ? "" : "s"}
                  </span>
                  {steps.length ? (
                    <span className="block truncate font-mono text-xs text-muted-foreground" title={steps.join("\n")}>
                      {steps[0]}
                      {steps.length > 1 ? " …" : ""}
                    </span>
                  ) : null}
                </td>
                <td className="py-2 pr-4">
                  <TemplateStatusBadge status={t.status} />
                </td>
                <td className="py-2 pr-4 text-right whitespace-nowrap tabular-nums">{formatMebibytes(t.size_mb)}</td>
                <td className="py-2 pr-4 whitespace-nowrap tabular-nums">{formatDateTime(t.created_at)}</td>
                <td className="py-2">
                  {/* A table cell ignores max-width; a block inside it does not. */}
                  <div className="w-52">
                    {users ? <SandboxLinks sandboxes={users} /> : <Skeleton className="h-4 w-16" />}
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}

function BaseImages() {
  const images = useQuery(templateQueries.baseImages());
  return (
    <Card>
      <CardHeader>
        <CardTitle>Built-in base images</CardTitle>
        <CardDescription>
          What a sandbox or a template starts from. Each says what it runs on this server.
        </CardDescription>
      </CardHeader>
      <CardContent>
        {images.isPending ? (
          <div role="status" aria-label="Loading base images" className="grid gap-3 sm:grid-cols-2">
            <Skeleton className="h-24 w-full" />
            <Skeleton className="h-24 w-full" />
          </div>
        ) : images.isError ? (
          <Alert variant="destructive">
            <AlertTitle className="font-semibold">The base images could not be listed</AlertTitle>
            <AlertDescription className="flex flex-wrap items-center gap-3 text-foreground">
              {errorText(images.error)}
              <Button size="sm" variant="outline" onClick={() => images.refetch()}>
                Retry
              </Button>
            </AlertDescription>
          </Alert>
        ) : images.data.length === 0 ? (
          <p className="text-sm text-muted-foreground">This server lists no base images.</p>
        ) : (
          <ul className="grid gap-3 sm:grid-cols-2" data-testid="base-images">
            {images.data.map((image) => (
              <li key={image.id} className="flex flex-col gap-1.5 rounded-md border p-3 text-sm">
                <div className="flex items-center justify-between gap-2">
                  <span className="font-mono font-medium">{image.id}</span>
                  {image.available === false ? (
                    <Badge variant="warning">Not available here</Badge>
                  ) : image.available ? (
                    <Badge variant="success">Available</Badge>
                  ) : null}
                </div>
                {image.description ? <p>{image.description}</p> : null}
                {image.maps_to ? (
                  <p className="text-xs text-muted-foreground">
                    Runs: <span className="font-mono">{image.maps_to}</span>
                  </p>
                ) : null}
                {image.gaps?.length ? (
                  <ul className="list-disc pl-4 text-xs text-muted-foreground">
                    {image.gaps.map((g) => (
                      <li key={g}>{g}</li>
                    ))}
                  </ul>
                ) : null}
              </li>
            ))}
          </ul>
        )}
      </CardContent>
    </Card>
  );
}
