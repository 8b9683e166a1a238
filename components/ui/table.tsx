import type { ComponentProps } from "react";
import { cn } from "../../lib/utils";

/**
 * The box every table scrolls sideways in on a narrow screen (tests/console/table-scroll.test.ts
 * holds every table of the console to it). It is positioned on purpose: an absolutely positioned descendant
 * (a screen-reader-only "Actions" header or caption: `sr-only` is `position: absolute`) is laid
 * out against its nearest positioned ancestor and clipped only by scroll boxes inside that one.
 * Without `relative` here that ancestor was the page: the hidden header sat at the table's far
 * edge, outside this box, and widened the whole document on a phone.
 */
export function TableScroll({ className, ...props }: ComponentProps<"div">) {
  return <div className={cn("relative overflow-x-auto", className)} {...props} />;
}
