"use client";

import { useQuery } from "@tanstack/react-query";
import { createContext, useContext, type ReactNode } from "react";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { DETAIL_POLL_MS, sandboxQueries } from "../../../lib/queries/sandboxes";
import { isFinished } from "../../../lib/sandbox-status";

const InitialSandbox = createContext<Sandbox | null>(null);

/**
 * The detail pages' sandbox: read server-side by the layout (so an unknown id is a 404 before any
 * client code runs), then kept live by one shared query that every tab reads through useSandbox().
 */
export function SandboxProvider({ initial, children }: { initial: Sandbox; children: ReactNode }) {
  return <InitialSandbox.Provider value={initial}>{children}</InitialSandbox.Provider>;
}

export function useSandbox() {
  const initial = useContext(InitialSandbox);
  if (!initial) throw new Error("useSandbox() outside <SandboxProvider>");
  return useQuery({
    ...sandboxQueries.detail(initial.id),
    initialData: initial,
    initialDataUpdatedAt: 0,
    // Expiry, auto-resume and other clients change the status too; a finished sandbox no more. Hidden tabs do not poll (the default).
    refetchInterval: (query) => (isFinished(query.state.data?.status ?? "") ? false : DETAIL_POLL_MS),
  });
}
