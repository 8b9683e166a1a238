"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useMemo, useRef, useState, type FormEvent } from "react";
import { toast } from "../../ui/toast";
import type { Limits } from "../../../lib/orkestr/schemas/limits";
import type { CreateSandboxBody, Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { asOrkestrError, type OrkestrError, errorText } from "../../../lib/orkestr/errors";
import { volumeQueries } from "../../../lib/queries/volumes";
import { sandboxKeys, sandboxMutations, sandboxQueries } from "../../../lib/queries/sandboxes";
import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Button } from "../../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { Input } from "../../ui/input";
import { Skeleton } from "../../ui/skeleton";
import { RetryNotice, SlowNotice } from "../../layout/lazy-notices";
import { CreateErrorAlert } from "./create-error-alert";
import {
  buildCreateRequest,
  initialFormState,
  maxTimeoutSeconds,
  openNetworkRefusal,
  previewAuthRefusal,
  sizeRefusal,
  type CreateFormState,
  type FieldErrors,
} from "./create-request";
import { explainCreateError, isAutoRetried, isDefinitiveRefusal } from "./explain-error";
import { CheckboxField, FormField, NativeSelect } from "./form-field";
import { CountdownChoice, EnvAndMetadata, NetworkChoice, SizeChoice, sizeOptions } from "./shared-fields";
import { PreviewTokenNotice } from "./preview-token-notice";
import { ShowCode } from "./show-code";
import { newIdempotencyKey } from "./idempotency-key";
import { SourceSection } from "./source-section";
import { useCountdown } from "./use-countdown";
import { VolumeSection } from "./volume-section";
import { sandboxHref } from "../../../lib/links";
import { TeamLink as Link, useTeamRouter } from "../../layout/team-link";

/** Retries of a temporary failure (fleet_full, an upstream restarting) the form makes on its own before it leaves the next one to the user (like the SDK's budget). */
const AUTO_RETRIES = 3;
/** When a temporary failure comes without Retry-After. */
const DEFAULT_RETRY_SECONDS = 5;

/** The create page's form: waits for the plan's limits (sizes, regions, default egress hosts), then renders. */
export function CreateSandboxForm({ baseUrl, initialTemplate }: { baseUrl?: string; initialTemplate?: string }) {
  const limits = useQuery(sandboxQueries.limits());
  // While the limits are being retried (lib/queries/retry.ts) the form is usable with the contract's
  // defaults: what the user types then is kept when the limits arrive (the form reads them once).
  if (limits.isPending && limits.failureCount === 0) {
    return (
      <div className="flex flex-col gap-4">
        <SlowNotice waiting={limits.isFetching} what="your plan's limits" />
        <div role="status" aria-label="Loading the create options" className="flex flex-col gap-4">
          <Skeleton className="h-40 w-full" />
          <Skeleton className="h-40 w-full" />
        </div>
      </div>
    );
  }
  return (
    <div className="flex flex-col gap-4">
      <RetryNotice query={limits} queryKey={sandboxKeys.limits()} title="Your plan's limits could not be read yet">
        <p className="text-muted-foreground">
          Meanwhile the form uses the contract&apos;s defaults; what you type is kept, and the server still checks
          everything.
        </p>
      </RetryNotice>
      {limits.isError ? (
        <Alert variant="warning">
          <AlertTitle>Your plan&apos;s limits could not be read</AlertTitle>
          <AlertDescription className="flex flex-wrap items-center gap-3 text-foreground">
            {errorText(limits.error)} The form uses the contract&apos;s defaults; the server still checks everything.
            <Button size="sm" variant="outline" onClick={() => limits.refetch()}>
              Retry
            </Button>
          </AlertDescription>
        </Alert>
      ) : null}
      <CreateSandboxFormBody limits={limits.data ?? null} baseUrl={baseUrl} initialTemplate={initialTemplate} />
    </div>
  );
}

function CreateSandboxFormBody({
  limits,
  baseUrl,
  initialTemplate,
}: {
  limits: Limits | null;
  baseUrl?: string;
  initialTemplate?: string;
}) {
  const router = useTeamRouter();
  const queryClient = useQueryClient();
  const volumes = useQuery(volumeQueries.list());
  const [state, setState] = useState<CreateFormState>(() => {
    const initial = initialFormState(limits);
    const firstAllowed = sizeOptions(limits).find((s) => !sizeRefusal(limits, s.size));
    return { ...initial, size: firstAllowed?.size ?? "", template: initialTemplate ?? initial.template };
  });
  const [showErrors, setShowErrors] = useState(false);
  const [serverError, setServerError] = useState<OrkestrError | null>(null);
  const [serverFieldErrors, setServerFieldErrors] = useState<FieldErrors>({});
  const [showCode, setShowCode] = useState(false);
  const [created, setCreated] = useState<{ id: string; token: string } | null>(null);
  const [retryDeadline, setRetryDeadline] = useState<number | null>(null);
  const autoRetries = useRef(0);
  const lastBody = useRef<CreateSandboxBody | null>(null);
  /** One key per distinct request: a retry of the same request after an unknown outcome reuses it. */
  const idempotency = useRef<{ key: string; body: string } | null>(null);
  const formRef = useRef<HTMLFormElement>(null);

  const ctx = useMemo(() => ({ limits, volumes: volumes.data ?? [] }), [limits, volumes.data]);
  const request = buildCreateRequest(state, ctx);
  const errors: FieldErrors = showErrors ? { ...request.errors, ...serverFieldErrors } : serverFieldErrors;

  const update = <K extends keyof CreateFormState>(key: K, value: CreateFormState[K]) => {
    setState((s) => ({ ...s, [key]: value }));
    setServerFieldErrors((e) => (Object.keys(e).length ? {} : e));
  };

  const mutation = useMutation({
    mutationFn: ({ body, key }: { body: CreateSandboxBody; key: string }) => sandboxMutations.create(body, key),
    onSuccess: (sandbox: Sandbox) => {
      setServerError(null);
      setRetryDeadline(null);
      void queryClient.invalidateQueries({ queryKey: sandboxKeys.lists() });
      queryClient.setQueryData(sandboxKeys.detail(sandbox.id), { ...sandbox, preview_auth_token: null });
      if (sandbox.preview_auth_token) {
        setCreated({ id: sandbox.id, token: sandbox.preview_auth_token });
        toast.success(`Sandbox ${sandbox.id} created`);
        return;
      }
      toast.success(`Sandbox ${sandbox.id} created`, {
        description: sandbox.status === "running" ? "It is running." : `Status: ${sandbox.status}.`,
      });
      router.push(sandboxHref(sandbox.id));
    },
    onError: (error) => {
      const apiError = asOrkestrError(error);
      if (isDefinitiveRefusal(apiError)) idempotency.current = null;
      setServerError(apiError);
      const field = explainCreateError(apiError).field;
      const fieldErrors: FieldErrors = {};
      for (const [k, v] of Object.entries(apiError.fieldErrors)) if (!k.includes(".")) fieldErrors[k] = v;
      if (field) fieldErrors[field] = apiError.detail;
      setServerFieldErrors(fieldErrors);
      if (isAutoRetried(apiError) && autoRetries.current < AUTO_RETRIES) {
        autoRetries.current += 1;
        setRetryDeadline(Date.now() + (apiError.retryAfterSeconds ?? DEFAULT_RETRY_SECONDS) * 1000);
      } else {
        setRetryDeadline(null);
      }
    },
  });

  const { mutate } = mutation;
  const send = useCallback(
    (body: CreateSandboxBody) => {
      const json = JSON.stringify(body);
      if (!idempotency.current || idempotency.current.body !== json)
        idempotency.current = { key: newIdempotencyKey(), body: json };
      lastBody.current = body;
      mutate({ body, key: idempotency.current.key });
    },
    [mutate],
  );

  const retryNow = useCallback(() => {
    setRetryDeadline(null);
    if (lastBody.current) send(lastBody.current);
  }, [send]);
  const secondsLeft = useCountdown(retryDeadline, retryNow);

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (mutation.isPending) return;
    setShowErrors(true);
    setServerFieldErrors({});
    if (!request.body) {
      // After React has marked the fields: focus the first one in error.
      requestAnimationFrame(() => {
        const first = formRef.current?.querySelector<HTMLElement>(
          '[aria-invalid="true"], [data-invalid] input:not(:disabled)',
        );
        first?.focus();
      });
      return;
    }
    autoRetries.current = 0;
    setServerError(null);
    send(request.body);
  };

  if (created) return <PreviewTokenNotice sandboxId={created.id} token={created.token} />;

  const maxTimeout = maxTimeoutSeconds(limits);
  const openRefusal = openNetworkRefusal(limits);
  const previewRefusal = previewAuthRefusal(limits, state.network);
  const busy = mutation.isPending || retryDeadline !== null;

  return (
    <form ref={formRef} noValidate onSubmit={onSubmit} className="flex flex-col gap-6" aria-label="Create a sandbox">
      <SourceSection state={state} update={update} errors={errors} />

      <Card>
        <CardHeader>
          <CardTitle>Size and place</CardTitle>
          <CardDescription>
            What the sandbox gets to run on{limits?.plan ? ` (plan: ${limits.plan})` : ""}.
          </CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-6">
          <SizeChoice
            name="size"
            limits={limits}
            state={state}
            update={update}
            error={errors.size}
            hint={state.source === "snapshot" ? "A fork keeps its snapshot's size unless you pick one." : undefined}
            sameAsSnapshot={state.source === "snapshot" ? {} : undefined}
          />
          {state.source === "template" ? (
            <FormField
              id="region"
              label="Region"
              error={errors.region}
              hint="Automatic picks one with capacity (or the volume's region)."
            >
              {(aria) => (
                <NativeSelect {...aria} value={state.region} onChange={(e) => update("region", e.target.value)}>
                  <option value="">Automatic</option>
                  {(limits?.regions ?? []).map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </NativeSelect>
              )}
            </FormField>
          ) : (
            <p className="text-sm text-muted-foreground">Region: a fork runs where its snapshot is.</p>
          )}
        </CardContent>
      </Card>

      <Card>
        <CardHeader>
          <CardTitle>Network</CardTitle>
          <CardDescription>What the sandbox may reach on the internet.</CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-4">
          <NetworkChoice
            name="network"
            legend="Egress"
            state={state}
            update={update}
            errors={errors}
            openRefusal={openRefusal}
            defaultDomains={limits?.default_egress_domains ?? []}
          />
          <CheckboxField
            id="preview-auth"
            checked={state.previewAuth}
            onChange={(v) => update("previewAuth", v)}
            label="Protect preview URLs with a token (preview_auth)"
            description={previewRefusal ?? "Every preview request must then carry a token, shown once after create."}
            error={errors.preview_auth}
          />
        </CardContent>
      </Card>

      <Card>
        <CardHeader>
          <CardTitle>Lifetime</CardTitle>
          <CardDescription>When the countdown ends, the sandbox is terminated or paused.</CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-4">
          <FormField
            id="timeout"
            label="Timeout (seconds)"
            error={errors.timeout_seconds}
            hint={`From 10 to ${maxTimeout} seconds. Keep-alive can extend it later.`}
          >
            {(aria) => (
              <Input
                {...aria}
                inputMode="numeric"
                value={state.timeoutSeconds}
                onChange={(e) => update("timeoutSeconds", e.target.value)}
                className="max-w-48"
                autoComplete="off"
              />
            )}
          </FormField>
          <CountdownChoice
            name="on_timeout"
            errorId="on-timeout-error"
            state={state}
            update={update}
            descriptions={{
              kill: "The sandbox and its scratch space are gone.",
              pause: "Memory and disk are kept; resume later.",
            }}
          />
          <CheckboxField
            id="auto-resume"
            checked={state.autoResume}
            onChange={(v) => update("autoResume", v)}
            label="Resume automatically (auto_resume)"
            description="Exec, file and preview traffic to a paused sandbox resumes it first."
          />
        </CardContent>
      </Card>

      <Card>
        <CardHeader>
          <CardTitle>Environment and metadata</CardTitle>
          <CardDescription>
            Env values are secrets: masked here, never shown again (the API returns names only).
          </CardDescription>
        </CardHeader>
        <CardContent className="flex flex-col gap-6">
          <EnvAndMetadata
            className="contents"
            state={state}
            update={update}
            errors={errors}
            placeholders={{ envKey: "OPENAI_API_KEY", metadataKey: "agent_run", metadataValue: "r_123" }}
            metadataHint="Labels to find the sandbox by (the list filters on key=value)."
          />
        </CardContent>
      </Card>

      <VolumeSection state={state} update={update} errors={errors} volumes={volumes} />

      {serverError ? (
        <CreateErrorAlert
          error={serverError}
          secondsLeft={secondsLeft}
          autoRetrying={retryDeadline !== null}
          onRetryNow={() => {
            // The user's own click starts a fresh series: its temporary failures are retried again.
            autoRetries.current = 0;
            retryNow();
          }}
          onCancelRetry={() => {
            setRetryDeadline(null);
            autoRetries.current = AUTO_RETRIES;
          }}
        />
      ) : null}
      {showErrors && !request.body ? (
        <p role="alert" className="text-sm font-medium text-destructive">
          Some fields need attention:{" "}
          {Object.keys(request.errors).length === 1
            ? "one field is"
            : `${Object.keys(request.errors).length} fields are`}{" "}
          marked above.
        </p>
      ) : null}

      <div className="flex flex-wrap items-center gap-2">
        <Button type="submit" disabled={busy}>
          {mutation.isPending ? "Creating…" : "Create sandbox"}
        </Button>
        <Button
          variant="outline"
          aria-expanded={showCode}
          aria-controls="show-code"
          onClick={() => setShowCode((v) => !v)}
        >
          {showCode ? "Hide code" : "Show code"}
        </Button>
        <Button asChild variant="ghost">
          <Link href="/sandboxes">Cancel</Link>
        </Button>
      </div>
      {showCode ? (
        <section id="show-code" aria-label="This request as code" className="flex flex-col gap-2">
          <p className="text-sm text-muted-foreground">
            The same request with the SDKs or curl. Your API key is read from ORKESTR_API_KEY, never written here.
          </p>
          <ShowCode body={request.draft} baseUrl={baseUrl} />
        </section>
      ) : null}
    </form>
  );
}
