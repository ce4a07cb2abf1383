import type { Actions } from "./actions/bulkActions";
import type { RetentionRun, RetentionStatus } from "./actions/retention";
import type { PauseOptions, PauseOutcome } from "./queue/pause";
import type { CleanupOptions, CleanupReport } from "./cleanup/cleanup";
import type { FeedChange, FeedHead } from "./db/changes";
import type { ActivityOptions, ActivityRow, LiveStateCounts } from "./db/queries/activity";
import type { StateCounts } from "./db/queries/countByState";
import type { MonitorPass, RecoveryReport, RequestSummary, StuckRequest, Tracker } from "./types";
import type { QueueStats } from "./db/queries/queueStats";
import type { SessionSeen } from "./db/queries/sessionsSeen";
import type { WorkerRow } from "./db/queries/workers";
import type { UnreadableFile } from "./db/unreadableFiles";
import type { Pause } from "./stateFiles/pauseFile";
import type { StateDir } from "./stateFiles/stateDir";
import type { IngestHandle, IngestOptions } from "./ingest/startIngest";
import type { ListFilters } from "./model/listFilters";
import type { RequestRecord } from "./model/requestFormat";
import type { CancelOptions, CancelReport } from "./queue/cancel";
import type { RetryOptions, RetryReport, RetryTarget } from "./queue/retry";
import type { IndexCheck, IndexGuardHandle } from "./recovery/indexGuard";
import type { SessionService } from "./sessions/sessionTracker";
import type { IndexingProgress } from "./store/context";

// What `openTracker` returns (the library's `Tracker`) and what reqwatch's own programs open
// (`TrackerService`), apart from the implementations: the recording tracker (lib/tracker.ts) and
// the one that records nothing (lib/disabledTracker.ts), neither importing the other's module.

/**
 * The recording tracker as reqwatch's own programs use it (the dashboard, the CLI, the MCP server,
 * the exporter and the receiver): the library's calls, the read model and a person's actions. Not
 * in the package's types: a dashboard feature widens this, never the library.
 */
export interface TrackerService extends Tracker {
  readonly stateDir: StateDir;
  /** The session tracker, with the sessions list and the reconciliation of their index. */
  readonly sessions: SessionService;
  /**
   * Every request `filters` match, in their order, `pageSize` (default 1,000) at a time, all from
   * one snapshot of the index taken at the first page: a request updated meanwhile is listed once,
   * as it was. The snapshot holds a read transaction until the last page or `return()`: read it
   * through promptly (the index's write-ahead log cannot be checkpointed past it meanwhile).
   */
  listAll(filters?: Omit<ListFilters, "limit" | "cursor">, pageSize?: number): Generator<RequestSummary[], void, undefined>;
  countsByState(filters?: { workspace?: string; sessionId?: string }): StateCounts;
  /**
   * The sessions requests carry (how many, first and last seen), most recently active first, or
   * only those of `ids`: a session id that requests carry is a session, recorded context or not.
   */
  sessionsSeen(options?: { ids?: readonly string[]; limit?: number }): SessionSeen[];
  /** When the oldest request indexed was created; null when there is none. */
  oldestCreatedAt(): number | null;
  /** The request files' total size in bytes, as indexed. */
  requestFileBytes(): number;
  /** A gateway's response files in the index (lib/responses). */
  responseCounts(): { files: number; unreadable: number; callbackFailed: number };
  unreadableFiles(): UnreadableFile[];
  /** The index's feed generation: changes when the index is rebuilt. */
  generation(): string;
  recover(options?: { processingStuckAfterMs?: number }): RecoveryReport;
  /**
   * Bring the index up to what the request files say now, for a process that does not follow the
   * folder (a command that reads): `ids`, only those requests (a file changed, added or gone); none,
   * every file, as a reconciliation does. Changes nothing in the folder, managed or observed.
   */
  refresh(ids?: readonly string[]): void;
  cleanup(options?: Partial<CleanupOptions>): CleanupReport;
  restore(requestId: string): RequestRecord;
  /** A person's retry of ids or of every request matching a filter; `dryRun` reports exactly what would change. */
  retry(target: RetryTarget, options?: RetryOptions): RetryReport;
  /** A person's cancel: created, queued or processing requests go to `failed`, reason `cancelled`; a worker's late result is dropped. */
  cancel(requestIds: readonly string[], options?: CancelOptions): CancelReport;
  /**
   * Pause a workspace's queue: no claim takes from it (work already claimed finishes), its wait is
   * not stuck. Durable (a file in the state folder), audited; refused in an observed folder.
   */
  pause(workspace: string, options?: PauseOptions): PauseOutcome;
  /** Resume a paused workspace; false when it was not paused. */
  resume(workspace: string, options?: { by?: string }): boolean;
  /** The paused workspaces, by name. */
  pauses(): Pause[];
  /** Each workspace with work queued or processing: how much, and since when the oldest has waited. */
  queueStats(): QueueStats[];
  /** The activity rollups' rows over a range (lib/db/queries/activity.ts) and the live states' counts now: the charts. */
  activity(options: ActivityOptions): { rows: ActivityRow[]; live: LiveStateCounts };
  /** Every worker process seen in the claims indexed (most recently seen first), with what it did and holds. */
  workers(limit?: number): WorkerRow[];
  /** The requests a worker held and did not finish, newest first. */
  unfinishedBy(worker: { pid: number; host: string | null; processStartedAt: number | null }, limit?: number): { requestId: string; claimedAt: number; outcome: string | null }[];
  /** Up to `limit` (default 20) known workspaces or session ids starting with `prefix`, in order (the filters' suggestions). */
  knownValues(field: "workspace" | "session", prefix?: string, limit?: number): string[];
  /** What is stuck now (read-only; the same rules as the monitor). */
  stuck(): StuckRequest[];
  /** One pass of the stuck monitor. */
  monitorPass(): MonitorPass;
  /**
   * One run of the retention (what the monitor runs): finished requests past `retentionMs`
   * archived and removed in paced steps, audited `by: retention`; the archive's own retention
   * applied. Null on an observed folder, with retention off, or when the tracker closed meanwhile.
   */
  runRetention(): Promise<RetentionRun | null>;
  /** The retention's settings, whether it acts on this folder, and its latest runs (by any process). */
  retention(): RetentionStatus;
  /** Waits not yet settled. */
  pendingWaits(): number;
  /** Watch the state directory for writers that are not ours, and reconcile it periodically; restarted when `checkIndex` reopens the index. */
  startIngest(options?: IngestOptions): IngestHandle;
  /** Changes after `afterSeq`, oldest first (the change feed). */
  changesSince(afterSeq: number, limit?: number): FeedChange[];
  /** Where the change feed starts and ends. */
  feedHead(): FeedHead;
  /** The newest change's number (cheap: for polling). */
  feedLastSeq(): number;
  /** After an index rebuild: fill up to `rows` rows of the text index; returns how many remain (0: done). A search finishes it itself. */
  backfillTextIndex(rows?: number): number;
  /**
   * Whether the index is still the state directory's index.db and readable; if it was deleted,
   * replaced or corrupted, reopen it (rebuilt from the files). A missing state directory is
   * reported and left for its owner to recreate.
   */
  checkIndex(): IndexCheck;
  /** `checkIndex` every `intervalMs` (default 1 s) in a long-lived process; `onReopened` is told the cause after a reopen. */
  startIndexGuard(options?: { intervalMs?: number; onReopened?: (cause: string) => void; onError?: (error: unknown) => void }): IndexGuardHandle;
  /** Bulk actions with dry runs, progress, the audit log and undo (the dashboard's actions). */
  readonly actions: Actions;
  /** With `rebuild: "in-background"`: how far the rebuild of the index from the files is; null when the index is complete. */
  indexing(): IndexingProgress | null;
  /**
   * With `rebuild: "in-background"`: run the rebuild the open left to do on a thread of its own,
   * newest files first, while this one goes on (reads see each batch as it commits). Its report;
   * null when there was none to do, or the tracker closed first (the next open rebuilds). When it
   * fails (a full disk), it rejects and `indexing()` stays: calling it again tries again.
   */
  rebuildIndex(): Promise<RecoveryReport | null>;
}
