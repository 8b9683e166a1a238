"use client";

import dynamic from "next/dynamic";

/**
 * AutoRefresh (./auto-refresh.tsx), loaded only when a page renders it: the console and sandbox layouts can
 * (its database-unavailable page), and a client component referenced there is in every page's first load.
 */
export const LazyAutoRefresh = dynamic(() => import("./auto-refresh").then((m) => m.AutoRefresh), { ssr: false });
