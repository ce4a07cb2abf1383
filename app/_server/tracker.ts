import "server-only";
import type { MonitorHandle } from "@/lib/monitor/startMonitor";
import { openTracker, type Tracker } from "@/lib/tracker";

/**
 * One tracker per server process, opened (with crash recovery) on first use, with the stuck
 * monitor running in it. Kept on globalThis so dev-mode module reloads reuse it instead of opening
 * the index again or starting a second monitor.
 */
const holder = globalThis as typeof globalThis & { __reqwatch?: { tracker: Tracker; monitor: MonitorHandle } };

function open(): { tracker: Tracker; monitor: MonitorHandle } {
  const tracker = openTracker();
  const monitor = tracker.startMonitor({ onError: (error) => console.error("reqwatch: monitor pass failed:", error.message) });
  return { tracker, monitor };
}

export function getTracker(): Tracker {
  holder.__reqwatch ??= open();
  return holder.__reqwatch.tracker;
}

/** The server's stuck monitor: its latest pass is what the stuck badge shows. */
export function getMonitor(): MonitorHandle {
  holder.__reqwatch ??= open();
  return holder.__reqwatch.monitor;
}
