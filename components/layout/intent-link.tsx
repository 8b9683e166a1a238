"use client";

import type { ComponentProps } from "react";
import { TeamLink as Link, useTeamRouter } from "./team-link";

/**
 * A link that prefetches its route when the user shows the intent to follow it (a pointer over it
 * or a finger on it, keyboard focus) instead of when it scrolls into view. The console's sidebar and a
 * sandbox's tabs are a dozen links on every page: prefetched on sight, that is a dozen or two
 * server renders, and as many responses for the main thread to take in, while the page is
 * still loading, for sections the user mostly never opens.
 */
export function IntentLink({
  href,
  onPointerEnter,
  onFocus,
  ...props
}: Omit<ComponentProps<typeof Link>, "href" | "prefetch"> & { href: string }) {
  const router = useTeamRouter();
  // One wrapper per intent: it prefetches, then runs the caller's own handler. Pointer events fire
  // for touch too (pointerenter on touch-down), so a touch needs no handler of its own.
  const onIntent =
    <E,>(own?: (e: E) => void) =>
    (e: E) => {
      router.prefetch(href);
      own?.(e);
    };
  return (
    <Link
      href={href}
      prefetch={false}
      onPointerEnter={onIntent(onPointerEnter)}
      onFocus={onIntent(onFocus)}
      {...props}
    />
  );
}
