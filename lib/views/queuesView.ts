import type { QueueStats } from "../db/queries/queueStats";
import type { Pause } from "../files/pauseFile";
import type { StuckRequest } from "../monitor/monitorPass";
import type { Tracker } from "../tracker";

/** A workspace's queue as the overview, the requests page and `reqwatch queues` show it. */
export interface QueueRow extends QueueStats {
  /** Its pause, or null when it runs. */
  paused: Pause | null;
  /** Whether its oldest request has waited past the queued stuck threshold (a paused queue never has). */
  late: boolean;
  /** Its processing requests the stuck monitor flags (hung, silent past the heartbeat timeout, or past their deadline). */
  stuck: number;
  /** In a word: paused; stuck (a processing request is); late (waited past the threshold); running (a worker holds some); waiting (none taken yet). */
  status: "paused" | "stuck" | "late" | "running" | "waiting";
}

function statusOf(row: Omit<QueueRow, "status">): QueueRow["status"] {
  return row.paused ? "paused" : row.stuck > 0 ? "stuck" : row.late ? "late" : row.processing > 0 ? "running" : "waiting";
}

/** How many processing requests each workspace has among `stuck`. */
export function stuckProcessingBy(stuck: readonly StuckRequest[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of stuck) {
    if (request.state === "processing") counts.set(request.workspace, (counts.get(request.workspace) ?? 0) + 1);
  }
  return counts;
}

/**
 * Every workspace with work waiting or running, and every paused one (with or without requests),
 * by name. `stuck`: what the stuck monitor found (the dashboard's latest pass, or `tracker.stuck()`).
 */
export function queuesView(tracker: Tracker, stuckFound: readonly StuckRequest[], now = Date.now()): QueueRow[] {
  const pauses = new Map(tracker.pauses().map((pause) => [pause.workspace, pause]));
  const stuck = stuckProcessingBy(stuckFound);
  const rows = new Map<string, QueueRow>();
  for (const stats of tracker.queueStats()) {
    const paused = pauses.get(stats.workspace) ?? null;
    const late = !paused && stats.oldestQueuedSince !== null && now - stats.oldestQueuedSince >= tracker.options.queuedStuckAfterMs;
    // The dashboard's findings are its monitor's last pass: a request stuck then may have finished since.
    const row = { ...stats, paused, late, stuck: Math.min(stuck.get(stats.workspace) ?? 0, stats.processing) };
    rows.set(stats.workspace, { ...row, status: statusOf(row) });
  }
  for (const [workspace, pause] of pauses) {
    if (!rows.has(workspace)) rows.set(workspace, { workspace, queued: 0, processing: 0, oldestQueuedSince: null, paused: pause, late: false, stuck: 0, status: "paused" });
  }
  return [...rows.values()].sort((a, b) => BY_NAME.compare(a.workspace, b.workspace));
}

/** Names as a person reads them: ws2 before ws10. */
const BY_NAME = new Intl.Collator("en", { numeric: true });
