"use client";

import { useEffect, useRef, useState, type RefObject } from "react";
import { rowRange } from "./row-range";

/** How long after the last scroll event the table counts as at rest. */
const SCROLL_IDLE_MS = 150;

export interface RowWindow {
  /** First and last row index to render (overscan included); last < first when there are no rows. */
  first: number;
  last: number;
  /** Height of all rows together: the scroll container's content height. */
  totalHeight: number;
  /** True while the user scrolls (and SCROLL_IDLE_MS after). */
  isScrolling: boolean;
}

/**
 * Windowing for rows of one fixed height: which rows of `count` are in (or near) the scroll
 * container's viewport. Our rows never change height, so this is arithmetic on scrollTop, and it
 * re-renders only when the window moves by a row or scrolling starts or stops. (It replaced
 * @tanstack/react-virtual, whose measuring of variable-size items the table never needed, for
 * ~10 KiB less gzipped JavaScript on /sandboxes.)
 */
export function useRowWindow(
  scrollRef: RefObject<HTMLElement | null>,
  count: number,
  rowHeight: number,
  overscan: number,
): RowWindow {
  const [view, setView] = useState({ top: 0, height: 0 });
  const [isScrolling, setIsScrolling] = useState(false);
  const readView = useRef<() => void>(() => {});

  useEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    let idle: ReturnType<typeof setTimeout> | undefined;
    // Only a change of window (whole rows) or of size is a new state: scrolling within a row is free.
    const read = () =>
      setView((prev) => {
        const top = el.scrollTop;
        const height = el.clientHeight;
        return Math.floor(prev.top / rowHeight) === Math.floor(top / rowHeight) && prev.height === height
          ? prev
          : { top, height };
      });
    const onScroll = () => {
      read();
      setIsScrolling(true);
      clearTimeout(idle);
      idle = setTimeout(() => setIsScrolling(false), SCROLL_IDLE_MS);
    };
    readView.current = read;
    read();
    el.addEventListener("scroll", onScroll, { passive: true });
    const resize = new ResizeObserver(read);
    resize.observe(el);
    return () => {
      clearTimeout(idle);
      el.removeEventListener("scroll", onScroll);
      resize.disconnect();
    };
  }, [scrollRef, rowHeight]);

  // Fewer rows (a filter) may clamp scrollTop without the window being where the state says: look again.
  useEffect(() => readView.current(), [count]);

  const { first, last } = rowRange(count, rowHeight, view.top, view.height, overscan);
  return { first, last, totalHeight: count * rowHeight, isScrolling };
}
