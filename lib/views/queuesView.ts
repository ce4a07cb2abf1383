import type { QueueStats } from "../db/queries/queueStats";
import type { Pause } from "../stateFiles/pauseFile";
import type { StuckRequest } from "../types";
import { STUCK_CAUSES, stuckCauseState, type StuckCause } from "../model/stuckCauses";
import type { Reader } from "../roles/reader";
import { lazily } from "../model/lazily";

/** A workspace's queue as the overview, the requests page and `reqwatch queues` show it. */
export interface QueueRow extends QueueStats {
  /** Its pause, or null when it runs. */
  paused: Pause | null;
  /** Its requests the stuck monitor flags, queued and processing: summed over the queues, the header's stuck count. */
  stuck: number;
  /** Of those, queued: they waited past the queued stuck threshold. */
  stuckQueued: number;
  /** Of those, processing: past their deadline, without a heartbeat, or with no worker holding them. */
  stuckProcessing: number;
  /** Why they are stuck, in the order of STUCK_CAUSES. */
  stuckCauses: StuckCause[];
  /** In a word: paused; stuck (a request in it is: `stuckCauses` say why); running (a worker holds some); waiting (none taken yet). */
  status: "paused" | "stuck" | "running" | "waiting";
}

function statusOf(row: Omit<QueueRow, "status">): QueueRow["status"] {
  return row.paused ? "paused" : row.stuck > 0 ? "stuck" : row.processing > 0 ? "running" : "waiting";
}

interface StuckInQueue {
  queued: number;
  processing: number;
  causes: Set<StuckCause>;
}

/** How many queued and processing requests each workspace has among `stuck`, and why they are stuck. */
export function stuckBy(stuck: readonly StuckRequest[]): Map<string, StuckInQueue> {
  const counts = new Map<string, StuckInQueue>();
  for (const request of stuck) {
    if (request.state !== "queued" && request.state !== "processing") continue;
    const count = counts.get(request.workspace) ?? { queued: 0, processing: 0, causes: new Set() };
    count[request.state]++;
    count.causes.add(request.cause);
    counts.set(request.workspace, count);
  }
  return counts;
}

/** A stuck queue's status in words, for the overview and `reqwatch queues`: "stuck: 2 of 3 processing (no heartbeat), 4 of 4 queued (waited too long)". */
export function stuckText(row: Pick<QueueRow, "stuckProcessing" | "processing" | "stuckQueued" | "queued" | "stuckCauses">): string {
  const why = (state: "queued" | "processing") => row.stuckCauses.filter((cause) => stuckCauseState(cause) === state).join(", ");
  const parts = [
    row.stuckProcessing && `${row.stuckProcessing} of ${row.processing} processing (${why("processing")})`,
    row.stuckQueued && `${row.stuckQueued} of ${row.queued} queued (${why("queued")})`,
  ];
  return `stuck: ${parts.filter(Boolean).join(", ")}`;
}

/** A paused queue in words: who paused it and why. */
function pausedText(pause: Pause): string {
  return `paused${pause.by ? ` by ${pause.by}` : ""}${pause.reason ? `: ${pause.reason}` : ""}`;
}

/**
 * A queue's status in words, for `reqwatch queues`. A pause excuses the wait, not a processing
 * request stuck in it: that one is in the stuck count, so its queue says so too.
 */
export function queueStatusText(row: QueueRow): string {
  const stuck = row.stuck > 0 ? stuckText(row) : null;
  if (row.paused) return stuck ? `${pausedText(row.paused)}; ${stuck}` : pausedText(row.paused);
  return stuck ?? row.status;
}

/**
 * Every workspace with work waiting or running, and every paused one (with or without requests),
 * by name. `stuck`: what the stuck monitor found (the dashboard's latest pass, or `tracker.stuck()`),
 * the one judge of stuck: the queues count its findings and decide nothing of their own.
 */
export function queuesView(reader: Reader, stuckFound: readonly StuckRequest[]): QueueRow[] {
  const pauses = new Map(reader.pauses().map((pause) => [pause.workspace, pause]));
  const stuck = stuckBy(stuckFound);
  const rows = new Map<string, QueueRow>();
  for (const stats of reader.queueStats()) {
    const paused = pauses.get(stats.workspace) ?? null;
    // The dashboard's findings are its monitor's last pass: a request stuck then may have finished since.
    const found = stuck.get(stats.workspace);
    const stuckQueued = Math.min(found?.queued ?? 0, stats.queued);
    const stuckProcessing = Math.min(found?.processing ?? 0, stats.processing);
    const stuckCauses = STUCK_CAUSES.filter((cause) => found?.causes.has(cause) && (stuckCauseState(cause) === "queued" ? stuckQueued : stuckProcessing) > 0);
    const row = { ...stats, paused, stuck: stuckQueued + stuckProcessing, stuckQueued, stuckProcessing, stuckCauses };
    rows.set(stats.workspace, { ...row, status: statusOf(row) });
  }
  for (const [workspace, pause] of pauses) {
    if (!rows.has(workspace))
      rows.set(workspace, {
        workspace,
        queued: 0,
        processing: 0,
        oldestQueuedSince: null,
        paused: pause,
        stuck: 0,
        stuckQueued: 0,
        stuckProcessing: 0,
        stuckCauses: [],
        status: "paused",
      });
  }
  return [...rows.values()].sort((a, b) => byName().compare(a.workspace, b.workspace));
}

/** Names as a person reads them: ws2 before ws10. Made on first use: a collator's locale data loads slowly, and most commands sort no queue. */
const byName = lazily(() => new Intl.Collator("en", { numeric: true }));
