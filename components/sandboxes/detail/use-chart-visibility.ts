"use client";

import { startTransition, useEffect, useState, type RefObject } from "react";

/** The share of a chart's box that must be on screen before its code loads. */
const LOAD_RATIO = 0.5;
/** How long a busy page may hold a chart back once it is on screen. */
const IDLE_TIMEOUT_MS = 2_000;

/** Runs `fn` when the main thread is idle (a short timeout where there is no requestIdleCallback: Safari). */
function whenIdle(fn: () => void): () => void {
  if (typeof window.requestIdleCallback === "function") {
    const handle = window.requestIdleCallback(fn, { timeout: IDLE_TIMEOUT_MS });
    return () => window.cancelIdleCallback(handle);
  }
  const timer = setTimeout(fn, 200);
  return () => clearTimeout(timer);
}

/**
 * When a live chart may load and when it is worth redrawing. The chart library is the heaviest code
 * of the sandbox page (its module evaluation and first render are long main-thread tasks on a
 * phone), and on a phone the charts start at the bottom edge of the screen or below it: `load`
 * turns true once half of the chart's box is on screen (a sliver of its top shows nothing to read)
 * and the main thread has been idle, and stays true; the mount then runs as a transition, which
 * React renders in slices instead of one long task. `visible` follows any part of the box in and
 * out of the viewport: a chart off screen need not be redrawn every second.
 */
export function useChartVisibility(ref: RefObject<Element | null>): { load: boolean; visible: boolean } {
  const [visible, setVisible] = useState(false);
  const [inView, setInView] = useState(false);
  const [load, setLoad] = useState(false);

  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const observer = new IntersectionObserver(
      (entries) => {
        const entry = entries[entries.length - 1];
        if (!entry) return;
        setVisible(entry.isIntersecting);
        setInView(entry.isIntersecting && entry.intersectionRatio >= LOAD_RATIO);
      },
      { threshold: [0, LOAD_RATIO] },
    );
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref]);

  useEffect(() => {
    if (!inView || load) return;
    return whenIdle(() => startTransition(() => setLoad(true)));
  }, [inView, load]);

  return { load, visible };
}
