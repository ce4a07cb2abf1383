"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { StuckSnapshot } from "@/lib/dashboard/feedEvents";
import { usePollInterval } from "../data/LiveFeed";
import { stuckOptions } from "../data/queries";

/** What the stuck monitor found, as the header's badge has it: one query for the badge and every other place that shows the count. */
function useStuck(initial: StuckSnapshot): StuckSnapshot {
  const pollMs = usePollInterval();
  return useQuery({ ...stuckOptions(), initialData: initial, refetchInterval: pollMs }).data;
}

/** The stuck count as a figure (the Health page): the same moment as the badge, so the two agree. */
export function LiveStuckCount({ initial }: { initial: StuckSnapshot }) {
  const { count } = useStuck(initial);
  return <span aria-label="Stuck count">{count}</span>;
}

/** Red when anything is stuck; links to the table filtered to the stuck requests. */
export function StuckBadge({ initial }: { initial: StuckSnapshot }) {
  const { count } = useStuck(initial);
  // The tab's title carries the count, for a tab in the background: React puts the <title> in the head (the layout's metadata has none).
  return (
    <>
      <title>{count > 0 ? `(${count} stuck) reqwatch` : "reqwatch"}</title>
      <Link prefetch={false} href="/requests?stuck=1" className={count > 0 ? "stuck-badge alert" : "stuck-badge"} aria-label={`${count} stuck`}>
        {count} stuck
      </Link>
    </>
  );
}
