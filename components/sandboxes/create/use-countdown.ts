"use client";

import { useEffect, useRef } from "react";
import { useNow } from "../../../lib/use-now";

/**
 * Whole seconds left until `deadline` (ms since the epoch), on the page's one clock (lib/use-now.ts);
 * null without a deadline or before the first tick. Calls `onDone` once per deadline when it reaches zero.
 */
export function useCountdown(deadline: number | null, onDone?: () => void): number | null {
  const now = useNow();
  const left = deadline === null || now === null ? null : Math.max(0, Math.ceil((deadline - now) / 1000));
  // The latest callback, without re-running the effect when the caller re-renders.
  const done = useRef(onDone);
  useEffect(() => {
    done.current = onDone;
  }, [onDone]);
  const firedFor = useRef<number | null>(null);
  useEffect(() => {
    if (left !== 0 || deadline === null || firedFor.current === deadline) return;
    firedFor.current = deadline;
    done.current?.();
  }, [left, deadline]);
  return left;
}
