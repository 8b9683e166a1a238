"use client";

import { useMutation, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { toast } from "../../components/ui/toast";
import { errorText } from "../orkestr/errors";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { Sandbox } from "../orkestr/schemas/sandboxes";
import { patchListedSandboxes } from "./sandbox-list";
import { sandboxKeys, sandboxMutations, type SandboxPatch } from "./sandboxes";

// Changing a sandbox from the UI, the one way: the cached sandbox (its detail and its rows in every
// loaded list page) changes at once, the server's answer replaces it, a failure puts the previous
// value back and says why in a toast, and the sandbox's queries are refreshed afterwards.

import type { LifecycleAction } from "../sandbox-status";
export type { LifecycleAction };

const nowIso = () => new Date().toISOString();

const LIFECYCLE: Record<LifecycleAction, { optimistic: () => Partial<Sandbox>; done: string; failed: string }> = {
  pause: { optimistic: () => ({ status: "paused", paused_at: nowIso() }), done: "Paused", failed: "pause" },
  // "resuming", not "running": what waits for a running sandbox (the Files and Previews tabs) must
  // not read before the server says it runs, or it reads a paused one and gets 409 sandbox_paused.
  resume: { optimistic: () => ({ status: "resuming" }), done: "Resumed", failed: "resume" },
  terminate: {
    optimistic: () => ({ status: "terminated", terminated_at: nowIso(), expires_at: null }),
    done: "Terminated",
    failed: "terminate",
  },
};

/** What a successful action says ("Paused sbx_…"), also used by the list's bulk summary. */
export const lifecycleDone = (action: LifecycleAction) => LIFECYCLE[action].done;

interface Snapshot {
  detail: Sandbox | undefined;
  row: Sandbox | undefined;
}

/** Applies `patch` to the sandbox wherever it is cached; returns what was there before. */
function patchCached(queryClient: QueryClient, id: string, patch: (s: Sandbox) => Sandbox): Snapshot {
  const key = sandboxKeys.detail(id);
  const detail = queryClient.getQueryData<Sandbox>(key);
  if (detail) queryClient.setQueryData<Sandbox>(key, patch(detail));
  let row: Sandbox | undefined;
  patchListedSandboxes(queryClient, (s) => {
    if (s.id !== id) return s;
    row ??= s;
    return patch(s);
  });
  return { detail, row };
}

function restore(queryClient: QueryClient, id: string, before: Snapshot | undefined) {
  if (before?.detail) queryClient.setQueryData(sandboxKeys.detail(id), before.detail);
  if (before?.row) patchListedSandboxes(queryClient, (s) => (s.id === id ? before.row! : s));
}

/** Refreshes what an action on `id` may have changed (its detail, every list, its metrics). */
export function refreshSandbox(queryClient: QueryClient, id: string) {
  void queryClient.invalidateQueries({ queryKey: sandboxKeys.detail(id) });
  void queryClient.invalidateQueries({ queryKey: sandboxKeys.lists() });
  void queryClient.invalidateQueries({ queryKey: sandboxKeys.metrics(id) });
}

/**
 * Pause, resume or terminate one sandbox: `mutate({ action, id })`. Used by the detail page, the
 * command palette, the Files/Previews gate and, with `bulk`, the list's bulk bar, which runs it for
 * many sandboxes, shows one summary instead of a toast each, and refreshes the list once at the end.
 */
export function useLifecycleAction({ bulk = false }: { bulk?: boolean } = {}) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ action, id }: { action: LifecycleAction; id: string }): Promise<Sandbox | undefined> => {
      if (action === "terminate") return void (await sandboxMutations.terminate(id));
      return sandboxMutations[action](id);
    },
    onMutate: async ({ action, id }) => {
      await queryClient.cancelQueries({ queryKey: sandboxKeys.detail(id) });
      const optimistic = LIFECYCLE[action].optimistic();
      return patchCached(queryClient, id, (s) => ({ ...s, ...optimistic }));
    },
    onError: (error, { action, id }, before) => {
      restore(queryClient, id, before);
      if (!bulk) toast.error(`Could not ${LIFECYCLE[action].failed} the sandbox`, { description: errorText(error) });
    },
    onSuccess: (answer, { action, id }) => {
      // A 202 without a body leaves the optimistic value until the refresh.
      if (answer) patchCached(queryClient, id, (s) => ({ ...s, ...answer }));
      if (!bulk) toast.success(`${LIFECYCLE[action].done} ${id}`);
    },
    onSettled: (_answer, _error, { id }) => {
      if (!bulk) refreshSandbox(queryClient, id);
    },
  });
}

/**
 * An edit of one sandbox's settings with the same optimistic update, rollback and toast as the
 * lifecycle actions: the keep-alive timeout, metadata, auto-resume and what happens at the timeout.
 */
function useSandboxEdit<TVars, TResult>(
  id: string,
  {
    run,
    optimistic,
    merge,
    success,
    failure,
  }: {
    run: (vars: TVars) => Promise<TResult>;
    optimistic: (vars: TVars) => Partial<Sandbox>;
    /** What the answer changes in the cached sandbox. */
    merge: (result: TResult, current: Sandbox) => Sandbox;
    success: (vars: TVars) => string;
    failure: string;
  },
) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: run,
    onMutate: async (vars: TVars) => {
      await queryClient.cancelQueries({ queryKey: sandboxKeys.detail(id) });
      const patch = optimistic(vars);
      return patchCached(queryClient, id, (s) => ({ ...s, ...patch }));
    },
    onError: (error, _vars, before) => {
      restore(queryClient, id, before);
      toast.error(failure, { description: errorText(error) });
    },
    onSuccess: (result, vars) => {
      patchCached(queryClient, id, (s) => merge(result, s));
      toast.success(success(vars));
    },
    onSettled: () => refreshSandbox(queryClient, id),
  });
}

const mergeSandbox = (result: Sandbox, current: Sandbox): Sandbox => ({ ...current, ...result });

/** The detail page's edits of one sandbox. */
export function useSandboxEdits(id: string) {
  const setTimeout = useSandboxEdit(id, {
    run: (seconds: number) => sandboxMutations.setTimeout(id, seconds),
    optimistic: (seconds) => ({
      timeout_seconds: seconds,
      expires_at: new Date(Date.now() + seconds * 1000).toISOString(),
    }),
    merge: (r, current) => ({
      ...current,
      ...(r.timeout_seconds != null ? { timeout_seconds: r.timeout_seconds } : {}),
      ...(r.expires_at != null ? { expires_at: r.expires_at } : {}),
    }),
    success: (seconds) => `The countdown restarts: ${seconds} s from now`,
    failure: "Could not set the timeout",
  });
  const updateMetadata = useSandboxEdit(id, {
    run: (metadata: Record<string, string>) => sandboxMutations.update(id, { metadata }),
    optimistic: (metadata) => ({ metadata }),
    merge: mergeSandbox,
    success: () => "Metadata saved",
    failure: "Could not save the metadata",
  });
  const updateSettings = useSandboxEdit(id, {
    run: (body: Omit<SandboxPatch, "metadata">) => sandboxMutations.update(id, body),
    optimistic: (body) => body,
    merge: mergeSandbox,
    success: (body) =>
      body.auto_resume !== undefined
        ? `Auto-resume ${body.auto_resume ? "on" : "off"}`
        : `At the end of the countdown: ${body.on_timeout === "pause" ? "pause" : "terminate"}`,
    failure: "Could not change the setting",
  });
  return { setTimeout, updateMetadata, updateSettings };
}
