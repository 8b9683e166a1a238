"use client";

import { useQueryClient } from "@tanstack/react-query";
import dynamic from "next/dynamic";
import { useSyncExternalStore } from "react";

// The banner's code loads only once a read on the page has failed: every console page carries this
// watcher, and the first-load budget has no room for the banner itself.
const OutageBanner = dynamic(() => import("./outage-banner").then((m) => m.OutageBanner), { ssr: false });

/** Renders the outage banner (./outage-banner.tsx) while any read on screen is failing and being retried. */
export function OutageWatch() {
  const queryClient = useQueryClient();
  const cache = queryClient.getQueryCache();
  const failing = useSyncExternalStore(
    (onChange) => cache.subscribe(onChange),
    () => cache.getAll().some((q) => q.state.fetchFailureCount > 0 && q.getObserversCount() > 0),
    () => false,
  );
  return failing ? <OutageBanner /> : null;
}
