"use client";

import { formatAgo, formatDuration } from "@/lib/model/duration";
import { useNow } from "./data/useNow";

// Times that tick, as leaves: each owns the clock, so a tick re-renders the time and not the
// component around it. Server and browser clocks differ: the parent element carries
// suppressHydrationWarning.

/** How long ago `at` was ("12s ago"), kept current. */
export function TimeAgo({ at }: { at: number }) {
  return formatAgo(at, useNow(1000));
}

/** How long since `since` ("3m 12s"), kept current. */
export function TimeSince({ since }: { since: number }) {
  return formatDuration(Math.max(0, useNow(1000) - since));
}
