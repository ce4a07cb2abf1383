"use client";

import { formatDuration } from "@/lib/model/duration";
import { useLiveStatus } from "../data/LiveFeed";
import { useNow } from "../data/useNow";

const LABEL = { connecting: "connecting…", connected: "live", reconnecting: "reconnecting…", polling: "stream down: polling every 5 s" } as const;

/** Whether the page is live: connected, reconnecting, or polling, with the age of the last event. */
export function LiveIndicator() {
  const { state, lastEventAt } = useLiveStatus();
  const now = useNow(1000);
  const age = lastEventAt === null ? null : Math.max(0, now - lastEventAt);
  return (
    <span className={`live live-${state}`} role="status" aria-label="Live status">
      <span className="dot" aria-hidden="true" />
      {LABEL[state]}
      {age !== null && age >= 2000 && <span className="age"> · last event {formatDuration(age)} ago</span>}
    </span>
  );
}
