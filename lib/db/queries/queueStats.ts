import type { IndexDb } from "../openIndex";
import { statement } from "../statements";

/** A workspace's queue now: what waits, what runs, and since when the oldest has waited. */
export interface QueueStats {
  workspace: string;
  queued: number;
  processing: number;
  /** When the oldest queued request entered `queued`; null when none waits. */
  oldestQueuedSince: number | null;
}

/** Every workspace with a request queued or processing, by name. */
export function queueStats(db: IndexDb): QueueStats[] {
  return statement(
    db,
    `SELECT workspace, sum(state = 'queued') AS queued, sum(state = 'processing') AS processing,
       min(CASE WHEN state = 'queued' THEN state_since END) AS oldestQueuedSince
     FROM requests WHERE state IN ('queued', 'processing') GROUP BY workspace ORDER BY workspace`,
  ).all() as QueueStats[];
}
