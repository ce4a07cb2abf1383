import "server-only";
import { FeedHub } from "@/lib/feed/feedHub";
import type { IngestHandle } from "@/lib/ingest/startIngest";
import type { MonitorHandle } from "@/lib/monitor/startMonitor";
import { openTracker, type Tracker } from "@/lib/tracker";

/**
 * One tracker per server process, opened (with crash recovery) on first use, with the stuck
 * monitor and the ingest of foreign writes running in it. Kept on globalThis so dev-mode module reloads reuse it instead of opening
 * the index again or starting a second monitor.
 */
interface Runtime {
  tracker: Tracker;
  monitor: MonitorHandle;
  ingest: IngestHandle;
  feed: FeedHub;
}

const holder = globalThis as typeof globalThis & { __reqwatch?: Runtime };

function open(): Runtime {
  const tracker = openTracker();
  const monitor = tracker.startMonitor({ onError: (error) => console.error("reqwatch: monitor pass failed:", error.message) });
  // Other writers (hooks, editors, other tools) reach the index, and so the live feed, at once.
  const ingest = tracker.startIngest({ onError: (error) => console.error("reqwatch: ingest failed:", error) });
  return { tracker, monitor, ingest, feed: new FeedHub(tracker) };
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

/** The server's stuck monitor: its latest pass is what the stuck badge shows. */
export function getMonitor(): MonitorHandle {
  return runtime().monitor;
}
