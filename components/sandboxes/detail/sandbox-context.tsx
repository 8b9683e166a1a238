"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { subscribeLive } from "../../../lib/queries/sandbox-live";
import { DETAIL_POLL_MS, sandboxKeys, sandboxQueries } from "../../../lib/queries/sandboxes";
import { isFinished } from "../../../lib/sandbox-status";

const InitialSandbox = createContext<{ initial: Sandbox; live: boolean } | null>(null);

/**
 * The detail pages' sandbox: read server-side by the layout (so an unknown id is a 404 before any
 * client code runs), then kept live by one shared query that every tab reads through useSandbox().
 * While the page's live stream is open the server pushes each change into that query; the query
 * polls only while it is not (connecting, dropped, or a server without the stream).
 */
export function SandboxProvider({ initial, children }: { initial: Sandbox; children: ReactNode }) {
  const queryClient = useQueryClient();
  const [live, setLive] = useState(false);
  // A finished sandbox changes no more: no stream for it (a push saying so closes it).
  const [finished, setFinished] = useState(isFinished(initial.status));
  useEffect(() => {
    if (finished) return;
    const key = sandboxKeys.detail(initial.id);
    const stop = subscribeLive(initial.id, {
      state: (s) => setLive(s === "live"),
      sandbox: (s) => {
        queryClient.setQueryData(key, s);
        if (isFinished(s.status)) setFinished(true);
      },
      // Read it the usual way, so the page shows the error exactly as it does for a poll.
      sandboxError: () => void queryClient.invalidateQueries({ queryKey: key, exact: true }),
    });
    return () => {
      stop();
      setLive(false);
    };
  }, [initial.id, finished, queryClient]);
  return <InitialSandbox.Provider value={{ initial, live }}>{children}</InitialSandbox.Provider>;
}

export function useSandbox() {
  const context = useContext(InitialSandbox);
  if (!context) throw new Error("useSandbox() outside <SandboxProvider>");
  const { initial, live } = context;
  return useQuery({
    ...sandboxQueries.detail(initial.id),
    initialData: initial,
    initialDataUpdatedAt: 0,
    // Expiry, auto-resume and other clients change the status too; a finished sandbox no more. Hidden
    // tabs do not poll (the default), and neither does a page whose live stream pushes the changes.
    refetchInterval: (query) => (live || isFinished(query.state.data?.status ?? "") ? false : DETAIL_POLL_MS),
  });
}
