import type { Command } from "commander";
import type { TrackerOptions } from "../options";
import { openTracker, type Tracker } from "../tracker";

/**
 * How a command gets its tracker. Commands open without recovery so a hook's `reqwatch update`
 * stays fast; `reqwatch recover` runs it on demand. A missing index is still rebuilt on open.
 */
export function trackerFor(command: Command, options: Omit<TrackerOptions, "stateDir" | "recover"> = {}): Tracker {
  const { stateDir } = command.optsWithGlobals<{ stateDir?: string }>();
  return openTracker({ ...options, stateDir, recover: false });
}

export async function withTracker<T>(command: Command, fn: (tracker: Tracker) => T, options: Omit<TrackerOptions, "stateDir" | "recover"> = {}): Promise<T> {
  const tracker = trackerFor(command, options);
  try {
    return fn(tracker);
  } finally {
    tracker.close();
  }
}
