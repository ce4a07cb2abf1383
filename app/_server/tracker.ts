import "server-only";
import { openTracker, type Tracker } from "@/lib/tracker";

/**
 * One tracker per server process, opened (with crash recovery) on first use. Kept on globalThis
 * so dev-mode module reloads reuse it instead of opening the index again.
 */
const holder = globalThis as typeof globalThis & { __reqwatchTracker?: Tracker };

export function getTracker(): Tracker {
  holder.__reqwatchTracker ??= openTracker();
  return holder.__reqwatchTracker;
}
