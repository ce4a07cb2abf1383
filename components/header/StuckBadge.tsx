"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import type { StuckSnapshot } from "@/lib/dashboard/feedHub";
import { usePollInterval } from "../data/LiveFeed";
import { stuckOptions } from "../data/queries";

/** Red when anything is stuck; links to the table filtered to the stuck requests. */
export function StuckBadge({ initial }: { initial: StuckSnapshot }) {
  const pollMs = usePollInterval();
  const { data } = useQuery({ ...stuckOptions(), initialData: initial, refetchInterval: pollMs });
  const count = data.count;
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
