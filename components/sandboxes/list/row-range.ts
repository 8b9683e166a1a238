/** The rows [first, last] a viewport of `height` px scrolled to `top` shows, `overscan` rows either side. */
export function rowRange(
  count: number,
  rowHeight: number,
  top: number,
  height: number,
  overscan: number,
): { first: number; last: number } {
  if (count === 0) return { first: 0, last: -1 };
  const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
  const last = Math.min(count - 1, Math.ceil((top + height) / rowHeight) - 1 + overscan);
  return { first: Math.min(first, count - 1), last: Math.max(last, Math.min(first, count - 1)) };
}
