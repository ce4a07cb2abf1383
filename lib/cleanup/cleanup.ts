import fs from "node:fs";
import { archiveRequests, copiesOnDisk, getArchived, removeArchived, type ArchiveDb } from "../db/archive";
import { commitChange } from "../store/commitChange";
import { withWritersLock } from "../db/writeLock";
import type { TrackerContext } from "../store/context";
import { ReqwatchError, isReqwatchError } from "../model/errors";
import { fsyncDir } from "../fs/durableWrite";
import { isSameFile, type FileFingerprint } from "../fs/fingerprint";
import { sleepSync } from "../process/sleepSync";
import { cleanupCandidates } from "../db/queries/cleanupCandidates";
import { removeRequest } from "../db/upsertRequest";
import { assertManaged } from "../store/ownership";
import { assertRequestId } from "../model/ids";
import { readRequestFile } from "../stateFiles/requestFile";
import type { RequestRecord } from "../model/requestFormat";
import { TERMINAL_STATES, type State } from "../model/states";
import { applyChange } from "../model/transition";

export interface CleanupOptions {
  /** Requests last updated longer ago than this go. */
  olderThanMs: number;
  /** Which states may go; terminal states by default. */
  states?: readonly State[];
  /** Report what would go and change nothing. */
  dryRun?: boolean;
  /** Only these requests (those of them that match): a bulk action works through its matches in chunks. */
  ids?: readonly string[];
  /** Requests last updated at or before this time go (default: now less `olderThanMs`): a dry run's cutoff, fixed for its run. */
  cutoff?: number;
  /**
   * Requests unlinked per hold of the writers' lock (default: a whole batch), and a pause between
   * two holds (the monitor's retention: writers in other processes wait for a short hold at most).
   */
  lockedPiece?: number;
  pauseMs?: number;
}

export interface CleanupReport {
  dryRun: boolean;
  /** Requests last updated before this time matched. */
  cutoff: number;
  matched: number;
  byState: Partial<Record<State, number>>;
  /** The matching ids, oldest first (dry run), or the ids archived and removed. */
  ids: string[];
  archived: number;
  skipped: { requestId: string; reason: string }[];
}

const BATCH = 500;

/** When a request was last written: its last update, or a later step of its history (a restore keeps the request's own time). */
function lastWrittenAt(request: RequestRecord): number {
  return Math.max(request.lastUpdatedAt, request.transitions?.at(-1)?.at ?? 0);
}

const NOT_ON_DISK = "its archived copy is not in archive.db on disk (the archive was deleted, replaced or damaged during the cleanup); the file is kept";

/** The second half of a cleanup, once the archive commit holds these requests: their files go (durably), then their index rows. Under the writers' lock. */
function removeArchivedFiles(ctx: TrackerContext, ids: readonly string[]): void {
  for (const id of ids) fs.rmSync(ctx.dir.requestFile(id), { force: true });
  fsyncDir(ctx.dir.requestsDir);
  for (const id of ids) removeRequest(ctx.db, id);
}

/**
 * A batch's files as they are now: those still matching go, a file already gone leaves its index
 * row to remove; an unreadable one, or one changed since it matched, is skipped (and said why).
 */
function readBatch(
  ctx: TrackerContext,
  batch: readonly { id: string }[],
  states: readonly State[],
  cutoff: number,
  skipped: CleanupReport["skipped"],
): { going: { request: RequestRecord; fingerprint: FileFingerprint }[]; gone: string[] } {
  const going: { request: RequestRecord; fingerprint: FileFingerprint }[] = [];
  const gone: string[] = [];
  for (const { id } of batch) {
    let read: ReturnType<typeof readRequestFile>;
    try {
      read = readRequestFile(ctx.dir.requestFile(id), id);
    } catch (error) {
      if (!isReqwatchError(error, "CORRUPT_FILE")) throw error;
      skipped.push({ requestId: id, reason: `unreadable: ${String(error.details?.reason ?? error.message)}` });
      continue;
    }
    if (!read) {
      gone.push(id);
      skipped.push({ requestId: id, reason: "the file was already gone" });
    } else if (!states.includes(read.request.state) || lastWrittenAt(read.request) > cutoff) {
      skipped.push({ requestId: id, reason: `changed since it matched (now ${read.request.state})` });
    } else {
      going.push(read);
    }
  }
  return { going, gone };
}

/**
 * Archive, then delete, the files of requests in `states` not updated for `olderThanMs`. Each
 * batch is committed to archive.db (fully synced), and its copies are read back from the file on
 * disk, before any of its files is unlinked, so a crash, or archive.db deleted or replaced during
 * the cleanup, leaves every request in the files, the archive, or both. Only the unlinks and the
 * index rows are under the writers' lock; a file rewritten after it was read and archived is
 * kept, and its stale archived copy dropped. Each archived copy is a new one, tagged with
 * `cleanupEntry` (the bulk action's audit entry), so an id used again never replaces another's copy.
 */
export function cleanup(ctx: TrackerContext, archive: () => ArchiveDb, options: CleanupOptions, cleanupEntry: number | null = null): CleanupReport {
  const states = options.states ?? TERMINAL_STATES;
  // An age past the epoch (99999999999999999999w) matches nothing, and its cutoff stays a date.
  const cutoff = Math.min(options.cutoff ?? Infinity, Math.max(0, ctx.now() - options.olderThanMs));
  const candidates = cleanupCandidates(ctx.db, states, cutoff, options.ids);

  const byState: Partial<Record<State, number>> = {};
  for (const { state } of candidates) byState[state] = (byState[state] ?? 0) + 1;
  const report: CleanupReport = { dryRun: !!options.dryRun, cutoff, matched: candidates.length, byState, ids: [], archived: 0, skipped: [] };
  if (options.dryRun) {
    report.ids = candidates.map((c) => c.id);
    return report;
  }
  assertManaged(ctx, "Cleanup");

  const archiveDb = archive();
  for (let start = 0; start < candidates.length; start += BATCH) {
    const { going, gone } = readBatch(ctx, candidates.slice(start, start + BATCH), states, cutoff, report.skipped);
    // The archive's commit (fully synced) comes first and outside the writers' lock: writers wait
    // only for the unlinks and the index rows. A crash from here on leaves a request in both.
    const copyIds = going.length
      ? archiveRequests(
          archiveDb,
          going.map((g) => g.request),
          ctx.now(),
          cleanupEntry,
        )
      : [];
    const removed: string[] = [];
    const changedSince: { requestId: string; copyId: number }[] = [];
    if (gone.length) withWritersLock(ctx, () => gone.forEach((id) => removeRequest(ctx.db, id)));
    // The unlinks in pieces, each one hold of the lock, with a pause between for other processes' writers.
    const piece = options.lockedPiece ?? going.length;
    for (let at = 0; at < going.length; at += piece) {
      if (at > 0 && options.pauseMs) sleepSync(options.pauseMs);
      withWritersLock(ctx, () => {
        const pieceGoing = going.slice(at, at + piece);
        // archive.db deleted, replaced or damaged since this cleanup opened it: copies it wrote are not on disk, and their files stay.
        const held = copiesOnDisk(
          archiveDb,
          pieceGoing.map(({ request }, i) => ({ copyId: copyIds[at + i]!, requestId: request.requestId })),
        );
        for (const [i, { request, fingerprint }] of pieceGoing.entries()) {
          const file = ctx.dir.requestFile(request.requestId);
          if (!held.has(copyIds[at + i]!)) {
            report.skipped.push({ requestId: request.requestId, reason: NOT_ON_DISK });
            continue;
          }
          // Written since it was read (every write renames a new file into place): the archived copy is stale.
          if (!isSameFile(file, fingerprint)) {
            changedSince.push({ requestId: request.requestId, copyId: copyIds[at + i]! });
            continue;
          }
          fs.rmSync(file, { force: true });
          removeRequest(ctx.db, request.requestId);
          removed.push(request.requestId);
        }
      });
    }
    if (removed.length) fsyncDir(ctx.dir.requestsDir);
    for (const { requestId, copyId } of changedSince) {
      removeArchived(archiveDb, copyId);
      report.skipped.push({ requestId, reason: "changed while it was archived" });
    }
    report.ids.push(...removed);
    report.archived += removed.length;
  }
  return report;
}

/**
 * After a crash during the cleanup audited as `cleanupEntry`, of `requestId`: finish it or undo
 * it, so the request is in the files or in the archive, not both. The archive commit is the point
 * of no return: a request archived as it still is gets its file removed; one that changed since
 * keeps its file and loses the stale archived copy. True when the request ends up cleaned up.
 */
export function settleCleanup(ctx: TrackerContext, archive: () => ArchiveDb, requestId: string, cleanupEntry: number): boolean {
  const archiveDb = archive();
  return withWritersLock(ctx, () => {
    const copy = getArchived(archiveDb, requestId, cleanupEntry);
    let current: RequestRecord | null;
    try {
      current = readRequestFile(ctx.dir.requestFile(requestId), requestId)?.request ?? null;
    } catch (error) {
      if (!isReqwatchError(error, "CORRUPT_FILE")) throw error;
      return false;
    }
    if (!copy) return false;
    if (!current) return true;
    if ((current.version ?? 0) === (copy.request.version ?? 0) && current.lastUpdatedAt === copy.request.lastUpdatedAt) {
      if (!copiesOnDisk(archiveDb, [{ copyId: copy.copyId, requestId }]).has(copy.copyId)) return false;
      removeArchivedFiles(ctx, [requestId]);
      return true;
    }
    removeArchived(archiveDb, copy.copyId);
    return false;
  });
}

/** After a crash during the undo of `cleanupEntry`, restoring `requestId`: finish it if it was half done. True when the request is back as a file from the archive. */
export function settleRestore(ctx: TrackerContext, archive: () => ArchiveDb, requestId: string, cleanupEntry: number): boolean {
  try {
    restore(ctx, archive, requestId, cleanupEntry);
    return true;
  } catch (error) {
    if (isReqwatchError(error, "ALREADY_EXISTS")) return false;
    if (!isReqwatchError(error, "NOT_FOUND")) throw error;
  }
  // Not in the archive: restored if the file is our restored copy.
  const current = readRequestFile(ctx.dir.requestFile(requestId), requestId)?.request;
  return current?.transitions?.at(-1)?.reason === RESTORED_REASON;
}

const RESTORED_REASON = "restored from the archive";

function isRestoredCopy(current: RequestRecord, archived: RequestRecord): boolean {
  return (
    current.createdAt === archived.createdAt &&
    (current.version ?? 0) === (archived.version ?? 0) + 1 &&
    current.transitions?.at(-1)?.reason === RESTORED_REASON
  );
}

/**
 * Bring an archived request back as a file, as it was when it was archived: the copy the cleanup
 * audited as `cleanupEntry` archived (an undo), else the newest copy. Never over a request that
 * exists: the copy then stays in the archive.
 */
export function restore(ctx: TrackerContext, archive: () => ArchiveDb, requestId: string, cleanupEntry?: number): RequestRecord {
  assertRequestId(requestId);
  const archiveDb = archive();
  let outcome = "missing" as "restored" | "exists" | "missing";
  let copyId = 0;
  const restored = commitChange(ctx, requestId, (current) => {
    const copy = getArchived(archiveDb, requestId, cleanupEntry);
    if (!copy) {
      outcome = current ? "exists" : "missing";
      return current;
    }
    copyId = copy.copyId;
    if (current) {
      // Our own restore, cut short after writing the file and before clearing the archived copy.
      outcome = isRestoredCopy(current, copy.request) ? "restored" : "exists";
      return current;
    }
    outcome = "restored";
    // Its history says when it was restored; its own times stay as they were, so the tables do not show it as updated now.
    return { ...applyChange(copy.request, { reason: RESTORED_REASON, by: "restore" }, ctx.now()), lastUpdatedAt: copy.request.lastUpdatedAt };
  });
  if (outcome === "missing")
    throw new ReqwatchError(
      "NOT_FOUND",
      `Request ${requestId} is not in the archive${cleanupEntry === undefined ? "" : ` as cleanup #${cleanupEntry} archived it`}.`,
    );
  if (outcome === "exists") throw new ReqwatchError("ALREADY_EXISTS", `Request ${requestId} already exists; it was not restored over.`);
  removeArchived(archiveDb, copyId);
  return restored!;
}
