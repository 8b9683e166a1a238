"use client";

import { useSyncExternalStore, type ReactNode } from "react";
import { CloseIcon } from "./icons";

// A server-rendered banner that the person can dismiss for this tab: the dismissal is kept in
// sessionStorage (per tab, gone when the tab closes), under an id that names what was said, so a new
// fact (a higher threshold, another cap, a new window) shows again. The server always renders it:
// without JavaScript, or on a tab that has not dismissed it, it is there on first paint.

const PREFIX = "baton.dismissed:";
const listeners = new Set<() => void>();
// Also in memory: where storage is blocked, a dismissal still holds until the next page load.
const dismissedHere = new Set<string>();

function isDismissed(id: string): boolean {
  if (dismissedHere.has(id)) return true;
  try {
    return sessionStorage.getItem(PREFIX + id) !== null;
  } catch {
    return false;
  }
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export function DismissibleBanner({
  id,
  className,
  testId,
  children,
}: {
  id: string;
  className: string;
  testId: string;
  children: ReactNode;
}) {
  const dismissed = useSyncExternalStore(
    subscribe,
    () => isDismissed(id),
    () => false,
  );
  if (dismissed) return null;
  const dismiss = () => {
    dismissedHere.add(id);
    try {
      sessionStorage.setItem(PREFIX + id, "1");
    } catch {
      // Storage blocked (private mode, policy): the in-memory note above still hides it.
    }
    for (const l of listeners) l();
    // The button is gone with the banner: keep keyboard focus where the reading goes on.
    document.getElementById("main")?.focus();
  };
  return (
    <div role="status" data-testid={testId} className={className}>
      <div className="min-w-0 flex-1">{children}</div>
      <button
        type="button"
        onClick={dismiss}
        aria-label="Dismiss"
        title="Dismiss for this tab"
        className="-my-1 shrink-0 rounded-md p-1 hover:bg-foreground/10 focus-visible:outline-2 focus-visible:outline-ring"
      >
        <CloseIcon />
      </button>
    </div>
  );
}
