"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { toast } from "../../ui/toast";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { apiFetch } from "../../../lib/queries/api";
import { sandboxKeys, sandboxMutations } from "../../../lib/queries/sandboxes";

type Patch = Partial<Sandbox>;

/**
 * One lifecycle action with an optimistic update: the cached sandbox takes `optimistic` at once,
 * the server's answer replaces it, and an error puts the previous value back and shows the
 * upstream's detail in a toast.
 */
function useSandboxAction<TVars, TResult>({
  id,
  run,
  optimistic,
  merge,
  success,
  failure,
}: {
  id: string;
  run: (vars: TVars) => Promise<TResult>;
  optimistic: (vars: TVars, current: Sandbox) => Patch;
  /** What the answer changes in the cached sandbox. */
  merge: (result: TResult, current: Sandbox) => Sandbox;
  success: (vars: TVars) => string;
  failure: string;
}) {
  const queryClient = useQueryClient();
  const key = sandboxKeys.detail(id);
  return useMutation({
    mutationFn: run,
    onMutate: async (vars: TVars) => {
      await queryClient.cancelQueries({ queryKey: key });
      const previous = queryClient.getQueryData<Sandbox>(key);
      if (previous) queryClient.setQueryData<Sandbox>(key, { ...previous, ...optimistic(vars, previous) });
      return { previous };
    },
    onError: (error, _vars, context) => {
      if (context?.previous) queryClient.setQueryData(key, context.previous);
      toast.error(failure, { description: error.message });
    },
    onSuccess: (result, vars) => {
      const current = queryClient.getQueryData<Sandbox>(key);
      if (current) queryClient.setQueryData<Sandbox>(key, merge(result, current));
      toast.success(success(vars));
    },
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: key });
      void queryClient.invalidateQueries({ queryKey: sandboxKeys.lists() });
      void queryClient.invalidateQueries({ queryKey: sandboxKeys.metrics(id) });
    },
  });
}

const nowIso = () => new Date().toISOString();
/** A pause/resume answer may be the whole sandbox (200) or nothing useful (202): keep what we have then. */
const mergeSandbox = (result: Sandbox | undefined, current: Sandbox): Sandbox =>
  result && typeof result === "object" && "id" in result ? { ...current, ...result } : current;

export function useLifecycle(id: string) {
  const pause = useSandboxAction<void, Sandbox>({
    id,
    run: () => sandboxMutations.pause(id),
    optimistic: () => ({ status: "paused", paused_at: nowIso() }),
    merge: mergeSandbox,
    success: () => `Paused ${id}`,
    failure: "Could not pause the sandbox",
  });
  const resume = useSandboxAction<void, Sandbox>({
    id,
    run: () => sandboxMutations.resume(id),
    optimistic: () => ({ status: "running", paused_at: null }),
    merge: mergeSandbox,
    success: () => `Resumed ${id}`,
    failure: "Could not resume the sandbox",
  });
  const terminate = useSandboxAction<void, void>({
    id,
    run: () => sandboxMutations.terminate(id),
    optimistic: () => ({ status: "terminated", terminated_at: nowIso(), expires_at: null }),
    merge: (_r, current) => current,
    success: () => `Terminated ${id}`,
    failure: "Could not terminate the sandbox",
  });
  const setTimeout = useSandboxAction<number, { timeout_seconds?: number | null; expires_at?: string | number | null }>(
    {
      id,
      run: (seconds) => sandboxMutations.setTimeout(id, seconds),
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
    },
  );
  const updateMetadata = useSandboxAction<Record<string, string>, Sandbox>({
    id,
    run: (metadata) => sandboxMutations.update(id, { metadata }),
    optimistic: (metadata) => ({ metadata }),
    merge: mergeSandbox,
    success: () => "Metadata saved",
    failure: "Could not save the metadata",
  });
  const updateSettings = useSandboxAction<{ auto_resume?: boolean; on_timeout?: "kill" | "pause" }, Sandbox>({
    id,
    run: (body) => apiPatch(id, body),
    optimistic: (body) => body,
    merge: mergeSandbox,
    success: (body) =>
      body.auto_resume !== undefined
        ? `Auto-resume ${body.auto_resume ? "on" : "off"}`
        : `At the end of the countdown: ${body.on_timeout === "pause" ? "pause" : "terminate"}`,
    failure: "Could not change the setting",
  });
  return { pause, resume, terminate, setTimeout, updateMetadata, updateSettings };
}

/** PATCH /api/v1/sandboxes/{id} with the fields the shared `update` mutation does not type (auto_resume, on_timeout). */
function apiPatch(id: string, body: { auto_resume?: boolean; on_timeout?: "kill" | "pause" }): Promise<Sandbox> {
  return apiFetch<Sandbox>(`/api/v1/sandboxes/${encodeURIComponent(id)}`, { method: "PATCH", body });
}
