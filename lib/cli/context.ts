import type { Command } from "commander";
import { isReqwatchError } from "../model/errors";
import { resolveTrackerOptions, trackingEnabled } from "../store/options";
import { openStateDir } from "../store/ownership";
import type { RequestPage, TrackerOptions } from "../types";
import { noteTrackingOff } from "../disabledTracker";
import { openRoles, openTracker, type Recording } from "../tracker";
import type { Tracker } from "../types";
import { ensureStateDir, resolveStateDirPath, stateDirAt } from "../stateFiles/stateDir";
import type { ListFilters } from "../model/listFilters";
import type { UnreadableFile } from "../db/unreadableFiles";
import { otelSpec, type SourceSpec } from "../sources/sourceSpec";
import { startFollowerIfUseful } from "./follower";
import { NotAllChanged, TrackingOff, UsageError } from "./outcomes";

export { UsageError };

/** After a report on named requests: exit 1 unless every one changed (or would, in a dry run). */
export function requireAllChanged(named: number, changed: number, dryRun: boolean, verb: string): void {
  if (named === 0 || changed >= named) return;
  throw new NotAllChanged(`${named - changed} of ${named} named request(s) ${dryRun ? "would not be" : "were not"} ${verb} (the lines above say why).`);
}

/**
 * With tracking off (REQWATCH_DISABLED), a command with nothing to do without a recording folder (a
 * server or a loop, one request or session shown, a change the disabled tracker cannot fake) stops
 * here: one line on stderr and exit 0, so a hook never fails because tracking is off. The commands
 * whose output a script captures (create, update, the session records) run on the disabled tracker
 * `openTracker` returns instead (`withLibraryTracker`), and the lists print an empty result
 * (`trackingIsOff`).
 */
export function stopIfTrackingOff(): void {
  if (trackingIsOff()) throw new TrackingOff();
}

/** True, having said so once on stderr, when tracking is off: a list then prints an empty result. */
export function trackingIsOff(): boolean {
  if (asUsage(() => trackingEnabled())) return false;
  noteTrackingOff();
  return true;
}

/**
 * How a command gets its tracker. Commands open without recovery so a hook's `reqwatch update`
 * stays fast; `reqwatch recover` runs it on demand, and a command that reads refreshes the index
 * (`withFreshTracker`). A missing index is still rebuilt on open.
 * `creates`: the command may create a missing state directory (it records something); a command
 * that reads never does, and says the folder does not exist.
 */
export function trackerFor(command: Command, options: CommandOptions = {}, creates = false): Recording {
  return openFor(command, openRoles, options, creates);
}

type CommandOptions = Omit<TrackerOptions, "stateDir" | "recover" | "create">;

function openFor<T>(command: Command, open: (options: TrackerOptions) => T, options: CommandOptions, creates: boolean): T {
  const { stateDir } = command.optsWithGlobals<{ stateDir?: string }>();
  try {
    return asUsage(() => open({ ...options, stateDir, recover: false, create: creates }));
  } catch (error) {
    // The folder named by --state-dir or REQWATCH_STATE_DIR is missing or not a folder: the value is wrong.
    if (isReqwatchError(error) && typeof error.details?.stateDir === "string") {
      const hint = " Check --state-dir (or REQWATCH_STATE_DIR); only `create` and the `session` commands that record make a new state directory.";
      throw new UsageError(`${error.message}${error.code === "NOT_FOUND" ? hint : ""}`);
    }
    throw error;
  }
}

/**
 * Opening refuses only what the command was given: its flags (already checked) and the REQWATCH_*
 * settings in its environment (`REQWATCH_RETENTION=0s`). A value that is wrong is a usage error,
 * exit 2, as a wrong flag is.
 */
function asUsage<T>(open: () => T): T {
  try {
    return open();
  } catch (error) {
    if (isReqwatchError(error, "BAD_INPUT")) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * The state folder's store folder (where reqwatch keeps its own files), as opening the tracker finds
 * it and with the same refusals, but without opening its index: a command that only keeps a file
 * there (the usage ledger) waits on no index catch-up or rebuild.
 */
export function storeDirOf(command: Command): string {
  return openFor(
    command,
    (options) => {
      const resolved = resolveTrackerOptions(options);
      const { dir } = openStateDir(resolved.stateDir, resolved);
      ensureStateDir(dir);
      return dir.storeDir;
    },
    {},
    false,
  );
}

/**
 * `withTracker` for a command that shows or selects what the folder holds: the index is first brought
 * up to the files (`refresh`: `ids` only, or every file), since no process may have followed them
 * since it was last read (another program's writes, a file edited by hand).
 */
export function withFreshTracker<T>(command: Command, fn: (recording: Recording) => T | Promise<T>, ids?: readonly string[]): Promise<T> {
  return withReadingTracker(command, (recording) => {
    recording.upkeep.refresh(ids);
    return fn(recording);
  });
}

/**
 * `withFreshTracker` for `list`'s page, and the request files it could not read: on an index not built yet, the newest files are read first,
 * until the page cannot change (the upkeep's `listBeforeIndexed`), and a follower completes the index after.
 */
export function freshPage(command: Command, filters: ListFilters): Promise<{ page: RequestPage; unreadable: UnreadableFile[] }> {
  return withReadingTracker(command, ({ reader, upkeep }) => {
    if (reader.indexing()) return { page: upkeep.listBeforeIndexed(filters), unreadable: [] };
    upkeep.refresh();
    return { page: reader.list(filters), unreadable: reader.unreadableFiles() };
  });
}

/**
 * A reading command's tracker: a new index is not built at open (a command about named requests
 * reads their files alone; one that needs every file waits for a follower that builds it, else
 * builds it in `refresh`), and on a big folder a follower is started for the next command.
 */
function withReadingTracker<T>(command: Command, fn: (recording: Recording) => T | Promise<T>): Promise<T> {
  return withTracker(
    command,
    async (recording) => {
      try {
        return await fn(recording);
      } finally {
        startFollowerIfUseful(recording.reader.stateDir);
      }
    },
    { rebuild: "in-background" },
  );
}

/** A source as the command line named it, `otel` as the telemetry the dashboards kept (the user's one store, or this state folder's: REQWATCH_TELEMETRY_DIR). */
export async function sourceFor(command: Command, given: SourceSpec | "otel"): Promise<SourceSpec> {
  if (given !== "otel") return given;
  // Loaded here, not with every command: the receiver's module brings its protobuf decoder.
  const { telemetrySettings, telemetryStoreDir } = await import("../telemetry/telemetrySettings");
  const settings = telemetrySettings();
  // Nothing is kept with tracking off: the receiver's store, where it would be, reads as empty.
  if (trackingIsOff())
    return otelSpec(
      telemetryStoreDir(settings, stateDirAt(resolveStateDirPath(command.optsWithGlobals<{ stateDir?: string }>().stateDir)).storeDir),
      settings.stuckAfterMs,
    );
  return withTracker(command, ({ reader }) => otelSpec(telemetryStoreDir(settings, reader.stateDir.storeDir), settings.stuckAfterMs));
}

export function withTracker<T>(command: Command, fn: (recording: Recording) => T | Promise<T>, options: CommandOptions = {}, creates = false): Promise<T> {
  return closing(trackerFor(command, options, creates), fn);
}

/**
 * For a hook's commands (create, update, the session records): the library's tracker, which with
 * tracking off records nothing and still answers, so a script that captures the output goes on.
 */
export function withLibraryTracker<T>(command: Command, fn: (tracker: Tracker) => T | Promise<T>, creates = false): Promise<T> {
  return closing(openFor(command, openTracker, {}, creates), fn);
}

async function closing<K extends { close(): void }, T>(tracker: K, fn: (tracker: K) => T | Promise<T>): Promise<T> {
  try {
    // Awaited, so a command that streams keeps its tracker open until it is done.
    return await fn(tracker);
  } finally {
    tracker.close();
  }
}
