import "server-only";
import { randomBytes } from "node:crypto";
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import { FeedHub } from "@/lib/feed/feedHub";
import type { IndexGuardHandle } from "@/lib/index/indexGuard";
import type { IngestHandle } from "@/lib/ingest/startIngest";
import type { StuckRequest } from "@/lib/monitor/monitorPass";
import type { MonitorHandle } from "@/lib/monitor/startMonitor";
import { openTracker, type Tracker } from "@/lib/tracker";
import { recoveryNotice, type RecoveryNotice } from "@/lib/views/overviewView";

/**
 * One tracker per server process, opened (with crash recovery) on first use, with the stuck
 * monitor and the ingest of foreign writes running in it. Kept on globalThis so dev-mode module reloads reuse it instead of opening
 * the index again or starting a second monitor.
 */
interface Runtime {
  tracker: Tracker;
  monitor: MonitorHandle;
  /** Replaced when the index guard reopens the state directory (its watchers were on the old folders). */
  ingest: IngestHandle;
  /** Notices a deleted, replaced or corrupted index.db, or a missing state directory, and recovers. */
  guard: IndexGuardHandle;
  feed: FeedHub;
  /** How long callbacks waited for the event loop: what every request waits behind a long synchronous task. */
  loopDelay: IntervalHistogram;
  /** Per launch: the browser sends it with every action, so another site's form or fetch cannot act. */
  actionToken: string;
  /** What opening did to requests left processing (recovery and the monitor's first pass), or null: the overview's notice. */
  recoveryNotice: RecoveryNotice | null;
}

const holder = globalThis as typeof globalThis & { __reqwatch?: Runtime };

function open(): Runtime {
  const tracker = openTracker();
  // Actions a killed server left half done say so in the audit log.
  tracker.actions.closeInterrupted();
  const feed = new FeedHub(tracker);
  const processingAtStart = tracker.list({ states: ["processing"], limit: 1000 }).items.map((row) => row.requestId);
  const monitor = tracker.startMonitor({
    onPass: (pass) => feed.publishStuck(pass.stuck, pass.at),
    onError: (error) => console.error("reqwatch: monitor pass failed:", error.message),
  });
  fillTextIndex(tracker);
  // Other writers (hooks, editors, other tools) reach the index, and so the live feed, at once.
  const startIngest = () => tracker.startIngest({ onError: (error) => console.error("reqwatch: ingest failed:", error) });
  const ingest = startIngest();
  // A rebuilt index has a new generation: the feed hub sees it and every browser resets and refetches.
  const guard = tracker.startIndexGuard({
    onReopened: (cause) => {
      console.error(`reqwatch: ${cause}; the index was rebuilt from the files.`);
      runtime().ingest.stop();
      runtime().ingest = startIngest();
      fillTextIndex(tracker);
    },
    onError: (error) => console.error("reqwatch: index check failed:", error),
  });
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  return { tracker, monitor, ingest, guard, feed, loopDelay, actionToken: randomBytes(32).toString("base64url"), recoveryNotice: recoveryNotice(tracker, tracker.openReport, processingAtStart) };
}

/** After a rebuild, fill the search index in small steps, leaving the event loop free between them. */
function fillTextIndex(tracker: Tracker): void {
  const step = () => {
    try {
      if (tracker.backfillTextIndex(1000) > 0) setImmediate(step);
    } catch (error) {
      console.error("reqwatch: filling the search index failed (a search will retry):", (error as Error).message);
    }
  };
  setImmediate(step);
}

function runtime(): Runtime {
  return (holder.__reqwatch ??= open());
}

/** The one fan-out of the change feed to every browser's event stream. */
export function getFeedHub(): FeedHub {
  return runtime().feed;
}

/** The server's watcher and reconciliation. */
export function getIngest(): IngestHandle {
  return runtime().ingest;
}

export function getTracker(): Tracker {
  return runtime().tracker;
}

export function getRecoveryNotice(): RecoveryNotice | null {
  return runtime().recoveryNotice;
}

export function getActionToken(): string {
  return runtime().actionToken;
}

/** What the monitor's latest pass found stuck (empty before the first pass): table rows show its reasons. */
export function getStuck(): StuckRequest[] {
  return runtime().monitor.lastPass()?.stuck ?? [];
}

/** The server's index guard: what is wrong with the state directory now, and the rebuilds it made. */
export function getIndexGuard(): IndexGuardHandle {
  return runtime().guard;
}

/** The event loop's delay since the server started: p50, p99 and max in ms. */
export function getEventLoopDelay(): { p50: number; p99: number; max: number } {
  const { loopDelay } = runtime();
  const ms = (ns: number) => Math.round(ns / 1e5) / 10;
  return { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) };
}

/** The server's stuck monitor: its latest pass is what the stuck badge shows. */
export function getMonitor(): MonitorHandle {
  return runtime().monitor;
}
