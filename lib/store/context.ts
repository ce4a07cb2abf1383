import type { IndexDb } from "../db/openIndex";
import type { IndexKeeper } from "../db/writeLock";
import type { Ownership, ResolvedTrackerOptions } from "../types";
import type { RequestRecord } from "../model/requestFormat";
import type { StateDir } from "../stateFiles/stateDir";
import type { IndexingProgress } from "../types";
export type { IndexingProgress };

/**
 * What the operations share: the folder, the index, the settings and the clock. Passed in, never
 * global, and never changed once made: the index's connection and progress are read from the folder's
 * index handle (lib/store/indexHandle.ts), and a rebuild passes a context of its own (`inRebuild`).
 */
export interface TrackerContext {
  readonly dir: StateDir;
  /** Whether reqwatch manages the folder (and may write there) or only observes it. */
  readonly ownership: Ownership;
  readonly db: IndexDb;
  /** Checks the index before each write and reopens a lost one (lib/roles/openFolder.ts); none in a rebuild thread's context. */
  readonly keeper?: IndexKeeper;
  readonly options: ResolvedTrackerOptions;
  readonly now: () => number;
  /** Called after every committed write of this process (waiters listen here). */
  readonly onCommit?: (request: RequestRecord) => void;
  /**
   * True in a rebuild's context, while a new index is filled from the files: its generation is new,
   * so every client resets anyway, and the feed is not filled with one change per file.
   */
  readonly rebuilding?: boolean;
  /** A rebuild under way on another thread (`rebuild: "in-background"`): files written so far, of how many. Periodic reconciliations wait for it. */
  readonly indexing?: IndexingProgress | null;
  /**
   * How a rebuild others look at while it runs goes (lib/recovery/rebuildThread.ts): newest files
   * first, reporting its progress. `settled`, asked after each batch with the newest modification
   * time of the files not yet in the index (their own latest time, when the folder's modification
   * times say nothing of them): true stops the rebuild there (a command has its answer), leaving the
   * index unfinished.
   */
  readonly rebuild?: RebuildMode;
}

export interface RebuildMode {
  newestFirst: boolean;
  onProgress: (done: number, total: number) => void;
  settled?: (unreadNewestMtimeMs: number) => boolean;
}

/** The context of one rebuild: the same folder, index and settings, in rebuild mode, for the calls it is passed to. */
export function inRebuild(ctx: TrackerContext, rebuild?: RebuildMode): TrackerContext {
  // Derived, not copied: the index's connection is still read live from the folder's handle.
  return Object.freeze(Object.create(ctx, { rebuilding: { value: true }, rebuild: { value: rebuild } }) as TrackerContext);
}
