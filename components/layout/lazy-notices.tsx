"use client";

import dynamic from "next/dynamic";
import type { ComponentProps } from "react";
import type { RetryNotice as RetryNoticeType, SlowNotice as SlowNoticeType } from "./retry-notice";

// The notices of ./retry-notice.tsx, loaded only when there is something to say: the pages that show
// them are at their first-load budget, and a healthy page never needs their code.
const RetryNoticeImpl = dynamic(() => import("./retry-notice").then((m) => m.RetryNotice), { ssr: false });
const SlowNoticeImpl = dynamic(() => import("./retry-notice").then((m) => m.SlowNotice), { ssr: false });

/** RetryNotice, once the query has failed at least once. */
export function RetryNotice(props: ComponentProps<typeof RetryNoticeType>) {
  return props.query.failureCount > 0 ? <RetryNoticeImpl {...props} /> : null;
}

/** SlowNotice, while the first load is waiting. */
export function SlowNotice(props: ComponentProps<typeof SlowNoticeType>) {
  return props.waiting ? <SlowNoticeImpl {...props} /> : null;
}
