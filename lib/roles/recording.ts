import type { IngestHandle, IngestOptions } from "../ingest/folderIngest";
import type { IndexCheck, IndexGuardHandle } from "../recovery/indexGuard";
import type { ListFilters } from "../model/listFilters";
import type { RecoveryReport, RequestPage, Tracker } from "../types";
import type { Operator } from "./operator";
import type { Reader } from "./reader";

/**
 * The index's upkeep in a long-lived process or a command that reads: following the folder, the
 * index's guard, its rebuild and text index, and bringing it up to the files. It reopens the
 * folder's index handle (lib/store/indexHandle.ts) and restarts what watched the old index, so it
 * is built where the folder is opened (lib/roles/openFolder.ts).
 */
export interface Upkeep {
  /**
   * Bring the index up to what the request files say now, for a process that does not follow the
   * folder (a command that reads): `ids`, only those requests (a file changed, added or gone); none,
   * every file, as a reconciliation does. Changes nothing in the folder, managed or observed.
   */
  refresh(ids?: readonly string[]): void;
  /**
   * The CLI's `list` on a folder opened with `rebuild: "in-background"` whose index is not built
   * yet: the page read from the newest files until it cannot change; else `list`.
   */
  listBeforeIndexed(filters: ListFilters): RequestPage;
  /** Watch the state directory for writers that are not ours, and reconcile it periodically; restarted when `checkIndex` reopens the index. */
  startIngest(options?: IngestOptions): IngestHandle;
  /**
   * Whether the index is still the state directory's index.db and readable; if it was deleted,
   * replaced or corrupted, reopen it (rebuilt from the files). A missing state directory is
   * reported and left for its owner to recreate.
   */
  checkIndex(): IndexCheck;
  /** `checkIndex` every `intervalMs` (default 1 s) in a long-lived process; `onReopened` is told the cause after a reopen. */
  startIndexGuard(options?: { intervalMs?: number; onReopened?: (cause: string) => void; onError?: (error: unknown) => void }): IndexGuardHandle;
  /**
   * With `rebuild: "in-background"`: run the rebuild the open left to do on a thread of its own,
   * newest files first, while this one goes on (reads see each batch as it commits). Its report;
   * null when there was none to do, or the folder closed first (the next open rebuilds). When it
   * fails (a full disk), it rejects and `indexing()` stays: calling it again tries again.
   */
  rebuildIndex(): Promise<RecoveryReport | null>;
  /** After an index rebuild: fill up to `rows` rows of the text index; returns how many remain (0: done). A search finishes it itself. */
  backfillTextIndex(rows?: number): number;
  /** Bring the session index in line with sessions/ (all of them, or `ids`), for a command that lists or shows sessions. */
  refreshSessions(ids?: readonly string[]): { fixes: number; unreadable: { file: string; reason: string }[] };
  /** Waits not yet settled. */
  pendingWaits(): number;
}

/**
 * A recording folder as reqwatch's own programs open it (`openRoles`): the library's tracker
 * beside the roles the programs hold, each with the few members its callers use. Not published.
 */
export interface Recording {
  readonly tracker: Tracker;
  readonly reader: Reader;
  readonly operator: Operator;
  readonly upkeep: Upkeep;
  /** Closes the folder: the tracker's `close`. */
  close(): void;
}
