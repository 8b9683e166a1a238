import { useSyncExternalStore } from "react";

// The one ticking clock for countdowns and relative times ("in 4m 05s", "5m ago"): a single 1 s
// interval shared by every component on the page, whatever the row count, none at all while nothing
// reads it, and no ticks while the tab is hidden.

let now = Date.now();
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | null = null;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (!timer) {
    now = Date.now();
    timer = setInterval(() => {
      // A hidden tab needs no ticking; the first visible tick catches up.
      if (document.hidden) return;
      now = Date.now();
      for (const l of listeners) l();
    }, 1_000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
}

/** The current time in ms, updated every second. On the server (and the first client render) null. */
export function useNow(): number | null {
  return useSyncExternalStore(
    subscribe,
    () => now,
    () => null,
  );
}
