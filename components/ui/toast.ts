"use client";

import type { ExternalToast } from "sonner";

// Toasts without sonner in any page's first load: the library (with its injected styles, ~8 KiB
// gzipped) loads after hydration with the outlet (components/ui/toaster.tsx). A toast raised before
// the outlet has subscribed waits for it: sonner drops toasts nobody listens to.

let loading: Promise<typeof import("sonner")> | undefined;
let outletReady: () => void = () => {};
const outlet = new Promise<void>((resolve) => {
  outletReady = resolve;
});

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
  void Promise.all([loadSonner(), outlet]).then(([{ toast: sonner }]) => {
    sonner[kind](message, options);
  });
}

/** `toast.success(…)` / `toast.error(…)`: the same calls as sonner's, shown once the outlet is up. */
export const toast = {
  success: (message: string, options?: ExternalToast) => show("success", message, options),
  error: (message: string, options?: ExternalToast) => show("error", message, options),
};
