"use client";

import dynamic from "next/dynamic";
import { useEffect, type ComponentProps } from "react";
import { useTheme } from "../layout/theme-provider";
import { loadSonner, markToasterMounted } from "./toast";

/**
 * sonner's outlet, loaded after hydration. Effects run child first, so by the time this wrapper's
 * effect says "mounted", sonner's own Toaster has subscribed and no queued toast is lost.
 */
const LazySonner = dynamic(
  () =>
    loadSonner().then(({ Toaster }) => {
      function Outlet(props: ComponentProps<typeof Toaster>) {
        useEffect(() => markToasterMounted(), []);
        return <Toaster {...props} />;
      }
      return Outlet;
    }),
  { ssr: false },
);

/**
 * The one toast outlet (sonner: accessible live region, stacking, swipe and keyboard dismissal,
 * which we would otherwise write ourselves). Raise toasts with `toast.success(…)` / `toast.error(…)`
 * from ./toast, which keeps sonner out of the first load.
 */
export function Toaster() {
  const { resolvedTheme } = useTheme();
  return <LazySonner theme={resolvedTheme} position="bottom-right" closeButton richColors duration={5000} />;
}
