import path from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { holderFile } from "../process/holderFile";
import type { Actions } from "./bulkActions";
import { ActionStopped } from "./pacedRunner";
import { pruneArchived, type ArchiveDb } from "../db/archive";
import { ensureAuditTable, pruneEntries } from "../db/auditLog";
import { latestRetentionRuns, pruneRetentionRuns, recordRetentionRun } from "../db/retentionRuns";
import type { RetentionRun } from "../types";
import { isReqwatchError } from "../model/errors";
import type { TrackerContext } from "../store/context";
import { RETENTION_INTERVAL_MS } from "../monitor/startMonitor";

export type { RetentionRun };

/**
 * Requests per step (one archive commit, one fsync of the folder), the requests unlinked per hold
 * of the writers' lock within it and the pause between holds, and the rest after a step. A step
 * holds the event loop of the process running it (a dashboard's live updates wait for it): small
 * steps, each followed by a rest with the event loop and the lock free, keep an open page's updates
 * prompt and a writer's holds short (`npm run bench`, the retention and retentionlive groups).
 */
const RETENTION_STEP = 10;
const RETENTION_LOCKED_PIECE = 5;
const RETENTION_PAUSE_MS = 2;
const RETENTION_REST_MS = 100;
/** Names the process running the retention of a folder: a dashboard and a `reqwatch monitor` on one folder take turns. */
export const RETENTION_HOLDER = "retention.holder";
/** Archived requests dropped per statement, the event loop free between. */
const ARCHIVE_STEP = 1000;

export interface RetentionStatus {
  /** Whether the monitor's retention acts on this folder: managed, with a retention set. */
  active: boolean;
  /** Why not, when it does not. */
  inactiveReason: string | null;
  retentionMs: number | null;
  archiveRetentionMs: number | null;
  /** How often the monitor runs it. */
  intervalMs: number;
  /** The latest run (by any process) and the latest that removed something. */
  latest: RetentionRun | null;
  lastRemoval: RetentionRun | null;
}

/** Why the monitor's retention does not run on this folder, or null when it does. */
export function retentionInactiveReason(ctx: TrackerContext): string | null {
  if (ctx.ownership.access !== "managed") return "the folder is observed, read-only: reqwatch removes nothing there";
  if (ctx.options.retentionMs === null && ctx.options.archiveRetentionMs === null)
    return "turned off (REQWATCH_RETENTION=off and REQWATCH_ARCHIVE_RETENTION=off)";
  return null;
}

export function retentionStatus(ctx: TrackerContext, archive: () => ArchiveDb): RetentionStatus {
  const inactiveReason = retentionInactiveReason(ctx);
  // An observed folder's archive is never opened: nothing has run there.
  const runs = ctx.ownership.access === "managed" ? latestRetentionRuns(archive()) : { latest: null, lastRemoval: null };
  return {
    active: inactiveReason === null,
    inactiveReason,
    retentionMs: ctx.options.retentionMs,
    archiveRetentionMs: ctx.options.archiveRetentionMs,
    intervalMs: RETENTION_INTERVAL_MS,
    ...runs,
  };
}

/**
 * One run of the retention, on a managed folder only: finished requests not updated for
 * `retentionMs` go through the same archive-first cleanup as the dashboard's button, in small
 * paced steps, audited `by: retention` (so it can be undone from the audit log); then archived
 * requests, audit entries and runs older than `archiveRetentionMs` are dropped. Null when the
 * folder is not one to act on, another process is running it (RETENTION_HOLDER), or the tracker
 * closed during the run.
 */
export async function runRetention(ctx: TrackerContext, actions: Actions, archive: () => ArchiveDb, signal?: AbortSignal): Promise<RetentionRun | null> {
  if (retentionInactiveReason(ctx) !== null) return null;
  const holder = holderFile(path.join(ctx.dir.storeDir, RETENTION_HOLDER));
  if (!holder.hold().held) return null;
  try {
    return await runHeld(ctx, actions, archive, signal);
  } finally {
    holder.release();
  }
}

async function runHeld(ctx: TrackerContext, actions: Actions, archive: () => ArchiveDb, signal?: AbortSignal): Promise<RetentionRun | null> {
  const startedAt = ctx.now();
  const run: RetentionRun = { startedAt, finishedAt: startedAt, removed: 0, skipped: 0, entryId: null, archiveDropped: 0, error: null };
  try {
    // A run another process left half done (killed) is settled first, so its requests are in the files or the archive.
    actions.closeInterrupted();
    if (ctx.options.retentionMs !== null) {
      const dryRun = actions.dryRun({ kind: "cleanup", olderThanMs: ctx.options.retentionMs });
      if (dryRun.willChange > 0) {
        const entry = await actions.run(
          { kind: "cleanup", olderThanMs: ctx.options.retentionMs, dryRunId: dryRun.dryRunId },
          { by: "retention", chunkSize: RETENTION_STEP, lockedPiece: RETENTION_LOCKED_PIECE, pauseMs: RETENTION_PAUSE_MS, restMs: RETENTION_REST_MS, signal },
        );
        Object.assign(run, { removed: entry.changed, skipped: entry.skipped, entryId: entry.id, error: entry.error });
      }
    }
    if (ctx.options.archiveRetentionMs !== null) run.archiveDropped = await pruneArchive(archive(), startedAt - ctx.options.archiveRetentionMs, signal);
  } catch (error) {
    if (error instanceof ActionStopped || signal?.aborted) return null;
    run.error = isReqwatchError(error) ? error.message : String((error as Error).message ?? error);
  }
  // Closed meanwhile (between two steps, or before the run's first turn of the event loop): nothing more is written.
  if (signal?.aborted) return null;
  run.finishedAt = ctx.now();
  recordRetentionRun(archive(), run);
  return run;
}

/** Drop what the archive keeps past its retention: archived requests, finished audit entries, retention runs. */
async function pruneArchive(db: ArchiveDb, before: number, signal?: AbortSignal): Promise<number> {
  let dropped = 0;
  for (;;) {
    const n = pruneArchived(db, before, ARCHIVE_STEP);
    dropped += n;
    if (n < ARCHIVE_STEP) break;
    await yieldToEventLoop();
    if (signal?.aborted) throw new ActionStopped();
  }
  ensureAuditTable(db);
  pruneEntries(db, before);
  pruneRetentionRuns(db, before);
  return dropped;
}
