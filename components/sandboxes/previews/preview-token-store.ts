"use client";

import { useSyncExternalStore } from "react";

/**
 * Preview tokens the user gave this tab (pasted, or rotated here), by sandbox id. Kept in memory
 * only: never in localStorage or sessionStorage, where any script on the origin and any later user
 * of the browser profile could read them, and never sent to Baton's server. A reload forgets them;
 * the cookie the preview host set from the token usually keeps the iframe working meanwhile.
 */
const tokens = new Map<string, string>();
const listeners = new Set<() => void>();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function setPreviewToken(sandboxId: string, token: string | null): void {
  if (token) tokens.set(sandboxId, token);
  else tokens.delete(sandboxId);
  listeners.forEach((l) => l());
}

export function usePreviewToken(sandboxId: string): string | null {
  return useSyncExternalStore(
    subscribe,
    () => tokens.get(sandboxId) ?? null,
    () => null,
  );
}
