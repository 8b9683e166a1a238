"use client";

import { useEffect, useRef, useState } from "react";

/**
 * Whole seconds left until `deadline` (ms since the epoch), ticking a few times a second; null
 * without a deadline. Calls `onDone` once when it reaches zero.
 */
export function useCountdown(deadline: number | null, onDone?: () => void): number | null {
  const [left, setLeft] = useState<number | null>(null);
  // The latest callback, without restarting the timer when the caller re-renders.
  const done = useRef(onDone);
  useEffect(() => {
    done.current = onDone;
  }, [onDone]);
  useEffect(() => {
    if (deadline === null) return;
    let fired = false;
    const tick = () => {
      const seconds = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
      setLeft(seconds);
      if (seconds === 0 && !fired) {
        fired = true;
        clearInterval(timer);
        done.current?.();
      }
    };
    const timer = setInterval(tick, 250);
    const first = setTimeout(tick, 0);
    return () => {
      clearInterval(timer);
      clearTimeout(first);
    };
  }, [deadline]);
  return deadline === null ? null : left;
}
