import type { Tracker, TrackerOptions } from "./types";
import { resolveTrackerOptions } from "./store/options";
import { openDisabledTracker, trackingOffError } from "./disabledTracker";
import { OpenFolder } from "./roles/openFolder";
import type { Recording, Upkeep } from "./roles/recording";

export type { Recording, Upkeep };

/**
 * Open the tracker on a state directory: decide whether reqwatch manages or only observes it
 * (lib/store/ownership.ts), create its folders (a managed one's), open (or rebuild) the index, and run
 * recovery unless `recover: false` (in an observed folder, the open only reconciles its index).
 * With tracking off, a tracker that records nothing (lib/disabledTracker.ts).
 */
export function openTracker(options: TrackerOptions = {}): Tracker {
  const resolved = resolveTrackerOptions(options);
  // Tracking off (REQWATCH_DISABLED, or enabled: false): not one file is touched from here on.
  if (!resolved.enabled) return openDisabledTracker(resolved, options.enabled === false);
  // The Tracker's members and no others: what is published is what can be called.
  return new OpenFolder(resolved).tracker;
}

/**
 * The folder as reqwatch's own programs open it (the dashboard, the CLI, the MCP server): the
 * library's tracker beside the reader, the operator and the index's upkeep. With tracking off there
 * is nothing to read or act on: the caller checks first (the CLI's `stopIfTrackingOff`), and this refuses.
 */
export function openRoles(options: TrackerOptions = {}): Recording {
  const resolved = resolveTrackerOptions(options);
  if (!resolved.enabled) throw trackingOffError("Reading or acting on the state folder");
  return new OpenFolder(resolved);
}
