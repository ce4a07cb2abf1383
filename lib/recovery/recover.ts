import type { TrackerContext } from "../store/context";
import { commitChange } from "../store/commitChange";
import { assertManaged } from "../store/ownership";
import { withWritersLock } from "../db/writeLock";
import { markTextBackfill } from "../db/requestText";
import type { Sessions } from "../sessions/sessionTracker";
import { recount, withUnsyncedWrites, writeMeta } from "../db/openIndex";
import { applyChange, stateEnteredAt } from "../model/transition";
import { formatDuration } from "../model/duration";
import { claimLiveness } from "../process/liveness";
import { processingSince, type ProcessingRow } from "../db/queries/stuckRows";
import { reconcileResponses } from "../responses/responseIndex";
import { reconcile, type ReconcileReport } from "./reconcile";
import type { RecoveryReport } from "../types";
import { sweepTempFiles } from "./sweepTempFiles";

export interface RecoverOptions {
  /** Time out requests processing, no worker holding them, for longer than this; null only rebuilds the index (no state changes). */
  processingStuckAfterMs: number | null;
}

/**
 * Crash recovery, safe to run at any time and from any process: sweep our crashed writers' temp
 * files, reconcile the index with the files, and time out requests stuck in `processing` past
 * `processingStuckAfterMs` (the owner's start-up recovery: `openTracker` in the owner's process, or
 * `reqwatch recover`; the dashboard never asks for it). In a folder reqwatch only observes, it
 * reconciles the index and changes nothing in the folder.
 */
/** A person's recovery (`reqwatch recover`): refused in an observed folder, where nothing is timed out. */
export function recoverNow(ctx: TrackerContext, sessions: Sessions, processingStuckAfterMs = ctx.options.processingStuckAfterMs): RecoveryReport {
  assertManaged(ctx, "Recovery");
  return recover(ctx, sessions, { processingStuckAfterMs });
}

export function recover(ctx: TrackerContext, sessions: Sessions, options: RecoverOptions): RecoveryReport {
  const started = performance.now();
  const managed = ctx.ownership.access === "managed";
  // A rebuild's writes are synced once at its end, not batch by batch.
  const reconciled = ctx.rebuilding ? withUnsyncedWrites(ctx.db, () => reconcile(ctx)) : reconcile(ctx);
  // Stopped once its caller had its answer: the index stays unfinished (not marked complete), and changes nothing else.
  if (!reconciled.complete)
    return {
      scanned: reconciled.scanned,
      changed: reconciled.fixes,
      timedOut: [],
      removedTempFiles: [],
      unreadable: reconciled.unreadable,
      readerThreads: reconciled.readerThreads,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
    };
  // After the reconciliation, which passes temp files by: a rebuild others look at while it runs has its newest requests in sooner.
  const removedTempFiles = managed ? sweepTempFiles(ctx) : [];
  const report = finishReconcile(ctx, sessions, reconciled, !!ctx.rebuilding);
  const timedOut = options.processingStuckAfterMs === null || !managed ? [] : timeOutStuckProcessing(ctx, options.processingStuckAfterMs);
  return { ...report, timedOut, removedTempFiles, durationMs: Math.round((performance.now() - started) * 10) / 10 };
}

/** What every reconciliation ends with: the sessions, the responses, and the marker that the index is complete; after a rebuild, the counts and the text index's backfill too. */
function finishReconcile(
  ctx: TrackerContext,
  sessions: Sessions,
  reconciled: ReconcileReport,
  rebuilt: boolean,
): Pick<RecoveryReport, "scanned" | "changed" | "unreadable" | "readerThreads"> {
  // The sessions' own context is the folder's: the rebuild's mode is passed.
  const sessionsReconciled = sessions.reconcile(undefined, { feed: !rebuilt });
  reconcileResponses(ctx);
  if (rebuilt) markTextBackfill(ctx.db);
  withWritersLock(ctx, () => {
    if (rebuilt) recount(ctx.db);
    writeMeta(ctx.db, "reconciled_at", String(ctx.now()));
  });
  return {
    scanned: reconciled.scanned,
    changed: reconciled.fixes,
    unreadable: [...reconciled.unreadable, ...sessionsReconciled.unreadable],
    readerThreads: reconciled.readerThreads,
  };
}

/**
 * Processing past `processingStuckAfterMs` with no live worker holding it: stuck, and the owner's
 * start-up recovery times it out. A request under a claim whose worker is alive, or beat within the
 * heartbeat timeout, is that worker's (a long job), not stuck by this rule: the monitor decides.
 */
function timeOutStuckProcessing(ctx: TrackerContext, stuckAfterMs: number): string[] {
  const now = ctx.now();
  const cutoff = now - stuckAfterMs;
  const rows = processingSince(ctx.db, cutoff);
  const held = (row: ProcessingRow) =>
    row.claim_token !== null &&
    ((row.heartbeat_at ?? 0) >= now - ctx.options.heartbeatTimeoutMs ||
      (row.claim_pid !== null &&
        claimLiveness({ pid: row.claim_pid, host: row.claim_host ?? undefined, processStartedAt: row.claim_process_started_at }) === "alive"));
  const stuck = rows.filter((row) => !held(row)).map((row) => row.id);
  const reason = `processing past ${formatDuration(stuckAfterMs)} with no worker holding it`;
  const timedOut: string[] = [];
  for (const id of stuck) {
    // Re-checked against the file: it may have moved on since the query.
    const after = commitChange(ctx, id, (current) => {
      if (!current || current.state !== "processing" || stateEnteredAt(current) >= cutoff) return current;
      return applyChange(current, { to: "timeout", reason, by: "recovery" }, ctx.now());
    });
    if (after?.state === "timeout" && after.transitions?.at(-1)?.reason === reason) timedOut.push(id);
  }
  return timedOut;
}
