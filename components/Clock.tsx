"use client";

import { formatAgo, formatDuration } from "@/lib/model/duration";
import { useNow } from "./data/useNow";

// Times that tick, as leaves: each owns the clock, so a tick re-renders the time and not the
// component around it. The page is rendered a moment before the browser takes it over, often across
// a second's tick: each leaf's own element says its text may differ, so no caller can forget to.

/**
 * A date, the one way every page shows one: how long ago or how soon ("12s ago", "in 3m"), kept
 * current, with the exact time (ISO, UTC) on hover. A time in a file that is not one shows as written.
 */
export function When({ at }: { at: number | string | null | undefined }) {
  const now = useNow(1000);
  const ms = typeof at === "string" ? Date.parse(at) : at;
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return <>{typeof at === "string" && at ? at : "—"}</>;
  const exact = new Date(ms).toISOString();
  return (
    <time dateTime={exact} title={exact} suppressHydrationWarning>
      {formatAgo(ms, now)}
    </time>
  );
}

/** How long since `since` ("3m 12s"), kept current. */
export function TimeSince({ since }: { since: number }) {
  return <span suppressHydrationWarning>{formatDuration(Math.max(0, useNow(1000) - since))}</span>;
}
