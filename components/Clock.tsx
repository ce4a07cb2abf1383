"use client";

import { formatAgo, formatDuration } from "@/lib/model/duration";
import { useNow } from "./data/useNow";

// Times that tick, as leaves: each owns the clock, so a tick re-renders the time and not the
// component around it. The page is rendered a moment before the browser takes it over, often across
// a second's tick: each leaf's own element says its text may differ, so no caller can forget to.

/** How long ago `at` was ("12s ago"), kept current. */
export function TimeAgo({ at }: { at: number }) {
  return <span suppressHydrationWarning>{formatAgo(at, useNow(1000))}</span>;
}

/** How long since `since` ("3m 12s"), kept current. */
export function TimeSince({ since }: { since: number }) {
  return <span suppressHydrationWarning>{formatDuration(Math.max(0, useNow(1000) - since))}</span>;
}
