import type { QueryClient } from "@tanstack/react-query";
import type { Sandbox } from "../../lib/orkestr/schemas/sandboxes";
import { patchListedSandboxes } from "../../lib/queries/sandbox-list";
import { sandboxKeys } from "../../lib/queries/sandboxes";
import { receivedEventKeys, subscribeReceived, type ReceivedEvent } from "../../lib/queries/received-events";

// Received events into the sandbox pages' data: a `sandbox.*` event carries the sandbox as it was
// when the event happened, so the list's row and the detail page's sandbox take it at once instead
// of at their next poll; the lists are then re-read (a new sandbox, or one a status filter now
// leaves out), which also settles anything the event's copy says less exactly than a read.

/** A burst of events (a bulk pause) re-reads the lists once. */
const REFRESH_AFTER_MS = 300;

function sandboxOf(event: ReceivedEvent): Sandbox | null {
  const s = (event.data as { sandbox?: unknown } | null)?.sandbox as Partial<Sandbox> | undefined;
  return s && typeof s.id === "string" && typeof s.status === "string" ? (s as Sandbox) : null;
}

/** Starts applying the user's received events to the sandbox queries; returns the stop. */
export function syncReceivedEvents(queryClient: QueryClient): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const refreshLists = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      void queryClient.invalidateQueries({ queryKey: sandboxKeys.lists() });
    }, REFRESH_AFTER_MS);
  };
  const stop = subscribeReceived({
    received(event) {
      // The events page keeps its own list current; other views of the feed re-read it.
      void queryClient.invalidateQueries({ queryKey: receivedEventKeys.lists(), refetchType: "none" });
      if (!event.type.startsWith("sandbox.")) return;
      const sandbox = sandboxOf(event);
      if (sandbox) {
        patchListedSandboxes(queryClient, (s) => (s.id === sandbox.id ? { ...s, ...sandbox } : s));
        const detail = sandboxKeys.detail(sandbox.id);
        if (queryClient.getQueryData(detail))
          queryClient.setQueryData<Sandbox>(detail, (old) => (old ? { ...old, ...sandbox } : old));
      }
      refreshLists();
    },
  });
  return () => {
    stop();
    if (timer) clearTimeout(timer);
  };
}
