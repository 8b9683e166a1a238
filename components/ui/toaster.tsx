"use client";

import dynamic from "next/dynamic";
import { useEffect, useSyncExternalStore, type ComponentProps } from "react";
import { useTheme } from "../layout/theme-provider";
import { loadSonner, markToasterMounted, subscribeToToastsWanted, toastsWanted } from "./toast";

/**
 * sonner's outlet, loaded with the first toast. Effects run child first, so by the time this wrapper's
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
 * from ./toast, which keeps sonner out of the page load: nothing mounts here until the first toast.
 */
export function Toaster() {
  const { resolvedTheme } = useTheme();
  const wanted = useSyncExternalStore(subscribeToToastsWanted, toastsWanted, () => false);
  if (!wanted) return null;
  return <LazySonner theme={resolvedTheme} position="bottom-right" closeButton richColors duration={5000} />;
}
