import type { Command } from "commander";
import { isReqwatchError } from "../model/errors";
import type { TrackerOptions } from "../store/options";
import { openTracker, type Tracker } from "../tracker";

/** A usage error found after commander's parsing (a state directory that does not exist, or is a file): exit 2. */
export class UsageError extends Error {}

/**
 * How a command gets its tracker. Commands open without recovery so a hook's `reqwatch update`
 * stays fast; `reqwatch recover` runs it on demand. A missing index is still rebuilt on open.
 * `creates`: the command may create a missing state directory (it records something); a command
 * that reads never does, and says the folder does not exist.
 */
export function trackerFor(command: Command, options: Omit<TrackerOptions, "stateDir" | "recover" | "create"> = {}, creates = false): Tracker {
  const { stateDir } = command.optsWithGlobals<{ stateDir?: string }>();
  try {
    return openTracker({ ...options, stateDir, recover: false, create: creates });
  } catch (error) {
    // The folder named by --state-dir or REQWATCH_STATE_DIR is missing or not a folder: the value is wrong.
    if (isReqwatchError(error) && typeof error.details?.stateDir === "string") {
      const hint = " Check --state-dir (or REQWATCH_STATE_DIR); only `create` and the `session` commands that record make a new state directory.";
      throw new UsageError(`${error.message}${error.code === "NOT_FOUND" ? hint : ""}`);
    }
    throw error;
  }
}

export async function withTracker<T>(command: Command, fn: (tracker: Tracker) => T | Promise<T>, options: Omit<TrackerOptions, "stateDir" | "recover" | "create"> = {}, creates = false): Promise<T> {
  const tracker = trackerFor(command, options, creates);
  try {
    // Awaited, so a command that streams keeps its tracker open until it is done.
    return await fn(tracker);
  } finally {
    tracker.close();
  }
}
