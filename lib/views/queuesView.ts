import type { QueueStats } from "../db/queries/queueStats";
import type { Pause } from "../files/pauseFile";
import type { Tracker } from "../tracker";

/** A workspace's queue as the overview, the requests page and `reqwatch queues` show it. */
export interface QueueRow extends QueueStats {
  /** Its pause, or null when it runs. */
  paused: Pause | null;
  /** Whether its oldest request has waited past the queued stuck threshold (a paused queue never has). */
  late: boolean;
}

/** Every workspace with work waiting or running, and every paused one (with or without requests), by name. */
export function queuesView(tracker: Tracker, now = Date.now()): QueueRow[] {
  const pauses = new Map(tracker.pauses().map((pause) => [pause.workspace, pause]));
  const rows = new Map<string, QueueRow>();
  for (const stats of tracker.queueStats()) {
    const paused = pauses.get(stats.workspace) ?? null;
    const late = !paused && stats.oldestQueuedSince !== null && now - stats.oldestQueuedSince >= tracker.options.queuedStuckAfterMs;
    rows.set(stats.workspace, { ...stats, paused, late });
  }
  for (const [workspace, pause] of pauses) {
    if (!rows.has(workspace)) rows.set(workspace, { workspace, queued: 0, processing: 0, oldestQueuedSince: null, paused: pause, late: false });
  }
  return [...rows.values()].sort((a, b) => a.workspace.localeCompare(b.workspace));
}
