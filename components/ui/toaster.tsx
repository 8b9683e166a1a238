"use client";

import { Toaster as Sonner } from "sonner";
import { useTheme } from "../layout/theme-provider";

/**
 * The one toast outlet (sonner: accessible live region, stacking, swipe and keyboard dismissal,
 * which we would otherwise write ourselves). Call `toast.success(…)` / `toast.error(…)` from "sonner".
 */
export function Toaster() {
  const { resolvedTheme } = useTheme();
  return <Sonner theme={resolvedTheme} position="bottom-right" closeButton richColors duration={5000} />;
}
