"use client";

import { QueryClient, QueryClientProvider, isServer } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { ThemeProvider } from "../components/layout/theme-provider";
import { Toaster } from "../components/ui/toaster";
import { retryDelay, shouldRetry } from "../lib/queries/retry";

function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // Server-rendered data is fresh for a while; avoids an immediate refetch after hydration.
        staleTime: 30_000,
        gcTime: 5 * 60_000,
        // Transient failures (no answer, 429, 5xx) are retried while the page shows them, honouring
        // Retry-After; lib/queries/retry.ts says why, and the notices show the countdown.
        retry: shouldRetry,
        retryDelay,
        refetchOnWindowFocus: true,
      },
      // A click is never repeated behind the user's back (the create form retries fleet_full itself, visibly).
      mutations: { retry: false },
    },
  });
}

// One client per browser tab; on the server a fresh one per request so no data is shared between users.
let browserQueryClient: QueryClient | undefined;
function getQueryClient(): QueryClient {
  if (isServer) return makeQueryClient();
  browserQueryClient ??= makeQueryClient();
  return browserQueryClient;
}

export function Providers({ children }: { children: ReactNode }) {
  const queryClient = getQueryClient();
  return (
    <QueryClientProvider client={queryClient}>
      <ThemeProvider>
        {children}
        <Toaster />
      </ThemeProvider>
    </QueryClientProvider>
  );
}
