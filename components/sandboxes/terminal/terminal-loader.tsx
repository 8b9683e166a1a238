"use client";

import dynamic from "next/dynamic";
import { Skeleton } from "../../ui/skeleton";

// xterm needs the DOM and weighs ~300 kB: it loads in the browser, only on this page.
export const TerminalLoader = dynamic(() => import("./terminal-workspace").then((m) => m.TerminalWorkspace), {
  ssr: false,
  loading: () => <Skeleton className="h-[60vh] w-full" />,
});
