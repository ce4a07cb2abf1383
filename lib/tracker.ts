import type { Tracker, TrackerOptions } from "./types";
import { resolveTrackerOptions } from "./store/options";
import { openDisabledTracker, trackingOffError } from "./disabledTracker";
import { OpenFolder } from "./roles/openFolder";
import type { Recording, TrackerService, Upkeep } from "./roles/recording";

export type { Recording, TrackerService, Upkeep };

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

/** `openRoles` with every role's members on one object: for the tests, the scripts and the benches, not the programs. */
export function openTrackerService(options: TrackerOptions = {}): TrackerService {
  return allInOne(openRoles(options));
}

function allInOne({ tracker, reader, operator, upkeep }: Recording): TrackerService {
  const service: Record<string, unknown> = { ...tracker, ...upkeep };
  for (const role of [reader, operator]) {
    for (const [name, member] of Object.entries(Object.getOwnPropertyDescriptors(Object.getPrototypeOf(role) as object))) {
      if (name === "constructor") continue;
      if (member.get) Object.defineProperty(service, name, { get: () => member.get!.call(role), enumerable: true, configurable: true });
      else service[name] = (member.value as (...args: unknown[]) => unknown).bind(role);
    }
  }
  // The session tracker with its list: the same object the tracker holds.
  return Object.assign(service, { actions: operator.actions, sessions: tracker.sessions }) as unknown as TrackerService;
}
