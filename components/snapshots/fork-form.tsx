"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, useState, type FormEvent } from "react";
import { sandboxHref } from "../../lib/links";
import { asOrkestrError, errorText } from "../../lib/orkestr/errors";
import type { Limits } from "../../lib/orkestr/schemas/limits";
import type { CreateSandboxBody } from "../../lib/orkestr/schemas/sandboxes";
import type { Snapshot } from "../../lib/orkestr/schemas/snapshots";
import { sandboxKeys, sandboxMutations } from "../../lib/queries/sandboxes";
import { snapshotKeys, snapshotQueries } from "../../lib/queries/snapshots";
import { maxTimeoutSeconds, openNetworkRefusal, type CreateFormState } from "../sandboxes/create/create-request";
import { CheckboxField, FormField } from "../sandboxes/create/form-field";
import { newIdempotencyKey } from "../sandboxes/create/idempotency-key";
import { CountdownChoice, EnvAndMetadata, NetworkChoice, SizeChoice } from "../sandboxes/create/shared-fields";
import { StatusBadge } from "../sandboxes/status-badge";
import { Button } from "../ui/button";
import { CodeTabs } from "../ui/code-tabs";
import { Input } from "../ui/input";
import { buildForkRequest, initialForkState, MAX_FORKS } from "./fork-request";
import { forkCode } from "./snapshot-code";
import { useApiBaseUrl } from "./use-base-url";
import { TeamLink as Link } from "../layout/team-link";

/** One child's progress: waiting for the server, born, or refused (with the server's sentence). */
type ChildState =
  | { n: number; state: "creating" }
  | { n: number; state: "created"; id: string; status: string }
  | { n: number; state: "failed"; error: string };

/**
 * Fork one or N children from a snapshot with the create options that apply to a fork (size,
 * network, lifetime, env, metadata), the create form's own fields and checks. Each child is its own
 * create with its own Idempotency-Key; their progress is listed with links as they are born.
 */
export function ForkForm({ snapshot, limits }: { snapshot: Snapshot; limits: Limits | null }) {
  const queryClient = useQueryClient();
  const baseUrl = useApiBaseUrl();
  const [state, setState] = useState<CreateFormState>(() => initialForkState(snapshot.id, limits));
  const [count, setCount] = useState("1");
  const [showErrors, setShowErrors] = useState(false);
  const [showCode, setShowCode] = useState(false);
  const [children, setChildren] = useState<ChildState[]>([]);
  const [running, setRunning] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  // The fork tree's query (same key, one fetch): a child's badge here follows its live status too.
  const live = useQuery(snapshotQueries.children(snapshot.id));
  const request = buildForkRequest(state, count, limits);
  const errors = showErrors ? request.errors : {};
  const update = <K extends keyof CreateFormState>(key: K, value: CreateFormState[K]) =>
    setState((s) => ({ ...s, [key]: value }));

  const fork = async (body: CreateSandboxBody, n: number) => {
    setRunning(true);
    setChildren(Array.from({ length: n }, (_, i) => ({ n: i + 1, state: "creating" as const })));
    const set = (i: number, next: ChildState) => setChildren((all) => all.map((c, j) => (j === i ? next : c)));
    // In parallel, as the SDK's fan-out would; each its own request, so one refusal does not stop the rest.
    await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        try {
          const sbx = await sandboxMutations.create(body, newIdempotencyKey());
          queryClient.setQueryData(sandboxKeys.detail(sbx.id), { ...sbx, preview_auth_token: null });
          set(i, { n: i + 1, state: "created", id: sbx.id, status: sbx.status });
        } catch (e) {
          set(i, { n: i + 1, state: "failed", error: errorText(asOrkestrError(e)) });
        }
      }),
    );
    setRunning(false);
    void queryClient.invalidateQueries({ queryKey: snapshotKeys.children(snapshot.id) });
    void queryClient.invalidateQueries({ queryKey: sandboxKeys.lists() });
    void queryClient.invalidateQueries({ queryKey: sandboxKeys.limits() });
  };

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    if (running) return;
    setShowErrors(true);
    if (!request.body) {
      requestAnimationFrame(() => formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
      return;
    }
    void fork(request.body, request.count);
  };

  const openRefusal = openNetworkRefusal(limits);
  const maxTimeout = maxTimeoutSeconds(limits);
  const done = children.filter((c) => c.state !== "creating").length;

  return (
    <form ref={formRef} noValidate onSubmit={onSubmit} className="flex flex-col gap-6" aria-label="Fork this snapshot">
      <FormField
        id="fork-count"
        label="How many children"
        error={errors.count}
        hint={`From 1 to ${MAX_FORKS}. Each is an independent sandbox: a write in one is invisible to the others.`}
      >
        {(aria) => (
          <Input
            {...aria}
            inputMode="numeric"
            autoComplete="off"
            value={count}
            onChange={(e) => setCount(e.target.value)}
            className="max-w-24"
          />
        )}
      </FormField>

      <SizeChoice
        name="fork-size"
        limits={limits}
        state={state}
        update={update}
        error={errors.size}
        sameAsSnapshot={{ description: snapshot.sandbox_size ?? undefined }}
      />
      <p className="-mt-3 text-xs text-muted-foreground">
        Template and region are the snapshot&apos;s ({snapshot.template ?? "—"}, {snapshot.region ?? "—"}); a fork
        cannot change them.
      </p>

      <NetworkChoice
        name="fork-network"
        legend="Network"
        state={state}
        update={update}
        errors={errors}
        openRefusal={openRefusal}
        defaultDomains={limits?.default_egress_domains ?? []}
      />

      <div className="grid gap-4 sm:grid-cols-2">
        <FormField
          id="fork-timeout"
          label="Timeout (seconds)"
          error={errors.timeout_seconds}
          hint={`From 10 to ${maxTimeout} seconds.`}
        >
          {(aria) => (
            <Input
              {...aria}
              inputMode="numeric"
              autoComplete="off"
              value={state.timeoutSeconds}
              onChange={(e) => update("timeoutSeconds", e.target.value)}
              className="max-w-48"
            />
          )}
        </FormField>
        <CountdownChoice name="fork-on-timeout" errorId="fork-on-timeout-error" state={state} update={update} />
      </div>
      <CheckboxField
        id="fork-auto-resume"
        checked={state.autoResume}
        onChange={(v) => update("autoResume", v)}
        label="Resume automatically (auto_resume)"
        description="Exec, file and preview traffic to a paused child resumes it first."
      />

      <EnvAndMetadata
        className="grid gap-6 lg:grid-cols-2"
        state={state}
        update={update}
        errors={errors}
        placeholders={{ envKey: "TASK_ID", metadataKey: "experiment", metadataValue: "a" }}
      />

      <div className="flex flex-wrap items-center gap-2">
        <Button type="submit" disabled={running}>
          {running
            ? `Forking… ${done} of ${children.length}`
            : request.count > 1
              ? `Fork ${request.count} children`
              : "Fork one child"}
        </Button>
        <Button
          variant="outline"
          aria-expanded={showCode}
          aria-controls="fork-code"
          onClick={() => setShowCode((v) => !v)}
        >
          {showCode ? "Hide code" : "Show code"}
        </Button>
      </div>
      {showCode ? (
        <section id="fork-code" aria-label="This fork as code" className="flex flex-col gap-2">
          <p className="text-sm text-muted-foreground">
            A fork is a sandbox create with <code>snapshot</code>. Your API key is read from ORKESTR_API_KEY, never
            written here.
          </p>
          <CodeTabs snippets={forkCode(request.draft, request.count, baseUrl)} testId="fork-code" />
        </section>
      ) : null}

      {children.length ? (
        <section aria-label="Fork progress" className="flex flex-col gap-2">
          <p role="status" className="text-sm font-medium">
            {running
              ? `Forking: ${done} of ${children.length} answered…`
              : `${children.filter((c) => c.state === "created").length} of ${children.length} forked.`}
          </p>
          <ul className="flex flex-col gap-1.5 text-sm" data-testid="fork-progress">
            {children.map((c) => (
              <li key={c.n} className="flex flex-wrap items-center gap-2">
                <span className="w-16 text-muted-foreground">Child {c.n}</span>
                {c.state === "creating" ? (
                  <span className="text-muted-foreground">Creating…</span>
                ) : c.state === "created" ? (
                  <>
                    <Link href={sandboxHref(c.id)} className="font-mono text-xs underline underline-offset-4">
                      {c.id}
                    </Link>
                    <StatusBadge status={live.data?.find((k) => k.id === c.id)?.status ?? c.status} />
                  </>
                ) : (
                  <span className="text-destructive">Not created: {c.error}</span>
                )}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </form>
  );
}
