import { useSyncExternalStore } from "react";

// One shared clock for every countdown on the page: a single 1 s interval, whatever the row count,
// and none at all while no countdown is mounted.

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
