"use client";

import type { ExternalToast } from "sonner";

// Toasts without sonner in any page's first load, nor in its first seconds: the library (with its
// injected styles, ~8 KiB gzipped, and a few dozen milliseconds of main thread on a phone to
// evaluate and mount) loads with the outlet (components/ui/toaster.tsx) when the first toast is
// raised. That toast waits for the outlet: sonner drops toasts nobody listens to.

let loading: Promise<typeof import("sonner")> | undefined;
let outletReady: () => void = () => {};
const outlet = new Promise<void>((resolve) => {
  outletReady = resolve;
});

let wanted = false;
const wantedListeners = new Set<() => void>();

/** For useSyncExternalStore: the outlet mounts once a toast has been raised. */
export function subscribeToToastsWanted(listener: () => void): () => void {
  wantedListeners.add(listener);
  return () => wantedListeners.delete(listener);
}

/** Whether any toast has been raised in this tab yet. */
export function toastsWanted(): boolean {
  return wanted;
}

/** sonner itself, loaded once. */
export function loadSonner(): Promise<typeof import("sonner")> {
  loading ??= import("sonner");
  return loading;
}

/** Called by the Toaster once sonner's outlet is mounted and listening. */
export function markToasterMounted(): void {
  outletReady();
}

function show(kind: "success" | "error", message: string, options?: ExternalToast): void {
  if (!wanted) {
    wanted = true;
    for (const listener of wantedListeners) listener();
  }
  void Promise.all([loadSonner(), outlet]).then(([{ toast: sonner }]) => {
    sonner[kind](message, options);
  });
}

/** `toast.success(…)` / `toast.error(…)`: the same calls as sonner's, shown once the outlet is up. */
export const toast = {
  success: (message: string, options?: ExternalToast) => show("success", message, options),
  error: (message: string, options?: ExternalToast) => show("error", message, options),
};
