"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import type { ComponentProps } from "react";

/**
 * A link that prefetches its route when the user shows the intent to follow it (pointer over it,
 * keyboard focus, a touch) instead of when it scrolls into view. The console's sidebar and a
 * sandbox's tabs are a dozen links on every page: prefetched on sight, that is a dozen or two
 * server renders, and as many responses for the main thread to take in, while the page is
 * still loading, for sections the user mostly never opens.
 */
export function IntentLink({
  href,
  onPointerEnter,
  onFocus,
  onTouchStart,
  ...props
}: Omit<ComponentProps<typeof Link>, "href" | "prefetch"> & { href: string }) {
  const router = useRouter();
  // One wrapper for the three intents: each prefetches, then runs the caller's own handler.
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
      onTouchStart={onIntent(onTouchStart)}
      {...props}
    />
  );
}
