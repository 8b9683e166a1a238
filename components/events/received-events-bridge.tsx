"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";

// Every console page listens to the user's received webhook events, so a sandbox's new status shows
// on the list and detail pages as soon as Baton receives it. The listening code is imported after
// hydration (it is in no page's first load, and this loader is kept to a few bytes: the list page is
// at its budget); for a user without a receiver it costs one request, which the server answers 204.
export function ReceivedEventsBridge() {
  const queryClient = useQueryClient();
  useEffect(() => {
    let stop: (() => void) | undefined;
    let on = true;
    void import("./received-events-sync").then((m) => on && (stop = m.syncReceivedEvents(queryClient)));
    return () => {
      on = false;
      stop?.();
    };
  }, [queryClient]);
  return null;
}
