import fs from "node:fs";
import { randomUUID } from "./process/crypto";
import { BulkActions } from "./actions/bulkActions";
import { backfillText } from "./db/requestText";
import { Sessions } from "./sessions/sessionTracker";
import { archiveReplaced, openArchive, type ArchiveDb } from "./db/archive";
import { retentionInactiveReason } from "./actions/retention";
import { commitChange } from "./store/commitChange";
import { withWritersLock } from "./db/writeLock";
import { inRebuild, type TrackerContext } from "./store/context";
import { IndexHandle } from "./store/indexHandle";
import { ReqwatchError } from "./model/errors";
import { discardSpares } from "./fs/durableWrite";
import { assertRequestId, assertWorkspace } from "./model/ids";
import { validateChange, validateFields } from "./model/requestInput";
import { getRequest } from "./db/queries/getRequest";
import { listRequests } from "./db/queries/listRequests";
import { indexProblem, startIndexGuard, type IndexCheck, type IndexGuardHandle } from "./recovery/indexGuard";
import { fileIdentity, indexedDownTo, readMeta, removeIndexFiles, type FileIdentity, type IndexDb } from "./db/openIndex";
import type { IndexLoss } from "./db/writeLock";
import { resolveListFilters, type ListFilters } from "./model/listFilters";
import type { MonitorWithRetention, RecoveryReport, RequestPage, ResolvedTrackerOptions, Tracker, TrackerOptions } from "./types";
import { resolveTrackerOptions } from "./store/options";
import { recover } from "./recovery/recover";
import { rebuildOnThread } from "./recovery/backgroundRebuild";
import { monitorPass } from "./monitor/monitorPass";
import { startMonitorWithRetention } from "./monitor/startMonitor";
import { claimNext } from "./queue/claimNext";
import { complete, fail, heartbeat } from "./queue/deliver";
import { Waiters } from "./queue/waiters";
import { startIngest, type IngestHandle } from "./ingest/startIngest";
import { activeTraceparent } from "./process/activeTrace";
import { feedLastSeq, requestsChangedSince } from "./db/changes";
import { indexedAsIs, ingestChangedSince, ingestRequests, reconcile } from "./recovery/reconcile";
import { followerRebuilt, syncWithFollower } from "./ingest/followerSync";
import { startCheckpoints } from "./db/checkpoints";
import type { RequestRecord } from "./model/requestFormat";
import { BACKGROUND_FROM_FILES, ensureStateDir, holdsAtLeast } from "./stateFiles/stateDir";
import { openStateDir } from "./store/ownership";
import { applyChange, changesNothing, newRequest, type Change } from "./model/transition";
import { openDisabledTracker, trackingOffError } from "./disabledTracker";
import { FolderReader } from "./roles/reader";
import { FolderOperator } from "./roles/operator";
import type { Recording, Upkeep } from "./roles/recording";
import { recordResult } from "./queue/recordResult";

export type { Recording, Upkeep };

function sameIdentity(a: FileIdentity | null, b: FileIdentity | null): boolean {
  return a !== null && b !== null && a.dev === b.dev && a.ino === b.ino;
}

/** A file's times may pass its modification time by this much (the file system stamps it from a coarser clock). */
const MTIME_SLACK_MS = 1000;

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
  return openRecording(resolved).tracker;
}

/**
 * The folder as reqwatch's own programs open it (the dashboard, the CLI, the MCP server): the
 * library's tracker beside the reader, the operator and the index's upkeep. With tracking off there
 * is nothing to read or act on: the caller checks first (the CLI's `stopIfTrackingOff`), and this refuses.
 */
export function openRoles(options: TrackerOptions = {}): Recording {
  const resolved = resolveTrackerOptions(options);
  if (!resolved.enabled) throw trackingOffError("Reading or acting on the state folder");
  return openRecording(resolved);
}

function openRecording(resolved: ResolvedTrackerOptions): Recording {
  const { dir, ownership } = openStateDir(resolved.stateDir, resolved);
  ensureStateDir(dir);
  const index = new IndexHandle(dir.indexFile);
  const waiters = new Waiters(() => index.db);
  const ctx: TrackerContext = Object.freeze({
    dir,
    ownership,
    get db() {
      return index.db;
    },
    get indexing() {
      return index.indexing;
    },
    keeper: { lost: lostIndex, reopen: reopenInWrite },
    options: resolved,
    now: resolved.now,
    onCommit: (request: RequestRecord) => waiters.notify(request),
  });
  const monitors = new Set<MonitorWithRetention>();
  /** Each ingest this tracker started, with how to restart it on a reopened index (its watchers were on the old folders). */
  const ingests = new Map<IngestHandle, () => void>();
  const guards = new Set<IndexGuardHandle>();

  const sessions = new Sessions(ctx);
  let archiveDb: ArchiveDb | null = null;
  const retiredArchives = new Set<ArchiveDb>();
  /** archive.db, reopened when the file at its path is no longer the one open (deleted or replaced): what is archived goes where a restart finds it. */
  const archive = () => {
    if (archiveDb && archiveReplaced(archiveDb)) {
      // A caller up the stack may still hold it (an audit entry being finished): closed once the call has returned.
      retiredArchives.add(archiveDb);
      setImmediate(closeRetired).unref();
      archiveDb = null;
    }
    return (archiveDb ??= openArchive(dir.archiveFile));
  };

  /** Every file was just read into the index (a rebuild or a recovery): a refresh right after has nothing to find. */
  let readEveryFile = false;
  /**
   * Bring the just-opened index up to date: an index that must be rebuilt is rebuilt even without
   * `withRecovery`; only recovery changes states (times out stuck processing requests).
   */
  function catchUp(withRecovery: boolean, when: "at-open" | "in-background" = "at-open"): RecoveryReport | null {
    if (index.needsRebuild && !withRecovery && when === "in-background" && holdsAtLeast(dir.requestsDir, BACKGROUND_FROM_FILES)) {
      index.leaveRebuild(ctx.now());
      return null;
    }
    const report =
      withRecovery || index.needsRebuild
        ? recover(index.needsRebuild ? inRebuild(ctx) : ctx, sessions, { processingStuckAfterMs: withRecovery ? resolved.processingStuckAfterMs : null })
        : null;
    readEveryFile = report !== null;
    return report;
  }

  const openReport = catchUp(resolved.recover, resolved.rebuild);
  /** Aborted by `close()`: a rebuild under way stops. */
  const stopping = new AbortController();
  const stopCheckpoints = startCheckpoints(() => ctx.db, `${dir.indexFile}-wal`);

  function mustExist(requestId: string, current: RequestRecord | null): RequestRecord {
    if (!current) throw new ReqwatchError("NOT_FOUND", `Request ${requestId} does not exist.`);
    return current;
  }

  const actions = new BulkActions(ctx, archive);

  /** Reopen a lost index (rebuilding it from the files when it is new) and the archive with it. */
  function checkIndex(): IndexCheck {
    const started = performance.now();
    const problem = indexProblem(dir, ctx.db, index.identity);
    if (!problem || problem.kind === "dir-missing") {
      // A writer reopened it since the last check: reported here, where what watched the old index restarts.
      const earlier = reopenedByWriter;
      reopenedByWriter = null;
      if (!earlier || problem) return { problem, reopened: false, durationMs: performance.now() - started };
      for (const restart of ingests.values()) restart();
      return { problem: earlier.loss, reopened: true, durationMs: earlier.durationMs };
    }
    reopenedByWriter = null;
    // Deleted or replaced: open what is there now (another process may have made it). Corrupt: start over, unless another process has already.
    if (problem.kind === "corrupt" && sameIdentity(fileIdentity(dir.indexFile), index.identity)) removeIndexFiles(dir.indexFile);
    ensureStateDir(dir);
    index.reopen().close();
    archiveDb?.close();
    archiveDb = null;
    catchUp(false);
    for (const restart of ingests.values()) restart();
    return { problem, reopened: true, durationMs: performance.now() - started };
  }

  /** A reopen a write made (the guard reports it at its next check), and how long it took. */
  let reopenedByWriter: { loss: IndexLoss; durationMs: number } | null = null;
  /** Connections a writer's reopen replaced: code up the stack may still hold one, so each is closed once the call has returned. */
  const retired = new Set<IndexDb>();

  /** Asked under the writers' lock before each write: is ctx.db still the file at index.db's path? One stat. */
  function lostIndex(): IndexLoss | null {
    const now = fileIdentity(dir.indexFile);
    if (!now) {
      // The whole state directory gone: the write fails as it would have, and the guard waits for the folder.
      if (!fs.existsSync(dir.root)) return null;
      return { kind: "deleted", message: "index.db was deleted" };
    }
    if (!sameIdentity(now, index.identity)) return { kind: "replaced", message: "index.db was replaced by another file" };
    return null;
  }

  /**
   * A writer found its index lost (deleted, replaced, or damaged under a write): open the one at
   * index.db's path before writing. The writes this process made to the lost file after it was
   * lost are in the request files: a new index is rebuilt from them, one another process made is
   * reconciled with them. (Opening takes the writers' lock: a write another process began on the
   * lost file before it was lost has renamed its file by then, so the rebuild reads it too.)
   */
  function reopenInWrite(loss: IndexLoss): void {
    const started = performance.now();
    // Damaged: start over, unless another process has replaced the file already (its index is kept).
    if (loss.kind === "corrupt" && sameIdentity(fileIdentity(dir.indexFile), index.identity)) removeIndexFiles(dir.indexFile);
    ensureStateDir(dir);
    retired.add(index.reopen());
    setImmediate(closeRetired).unref();
    if (index.needsRebuild) catchUp(false);
    else reconcile(ctx);
    reopenedByWriter = { loss, durationMs: performance.now() - started };
  }

  function closeRetired(): void {
    for (const db of [...retired, ...retiredArchives]) {
      try {
        db.close();
        retired.delete(db);
        retiredArchives.delete(db);
      } catch {
        // Still in use (a statement being iterated): the next pass closes it.
      }
    }
  }

  const reader = new FolderReader(ctx, { sessions, archive, follows: () => ingests.size > 0, openedGeneration: () => index.generation });
  const operator = new FolderOperator(ctx, { sessions, archive, actions, stopping: stopping.signal });

  const tracker: Tracker = {
    ownership,
    sessions,
    options: resolved,
    openReport,

    rebuildIndex: () => upkeep.rebuildIndex(),
    indexing: () => reader.indexing(),

    create(input) {
      const { requestId = randomUUID(), workspace, ...rest } = input;
      assertRequestId(requestId);
      assertWorkspace(workspace);
      const { state, reason, by, ...given } = rest;
      // Created inside an instrumented gateway's span: its trace is the request's.
      const traceparent = given.traceparent ?? activeTraceparent() ?? undefined;
      const validated = validateFields({ ...given, ...(traceparent !== undefined && { traceparent }) }) ?? {};
      return commitChange(ctx, requestId, (current) => {
        if (current) throw new ReqwatchError("ALREADY_EXISTS", `Request ${requestId} already exists.`);
        return newRequest({ ...validated, requestId, workspace, state, reason, by }, ctx.now());
      })!;
    },

    transition(requestId, to, extra = {}) {
      return this.update(requestId, { ...extra, to });
    },

    update(requestId, change) {
      assertRequestId(requestId);
      const fixed = typeof change === "function" ? null : validateChange(change);
      return commitChange(ctx, requestId, (current) => {
        const request = mustExist(requestId, current);
        const next = fixed ?? validateChange((change as (current: RequestRecord) => Change)(request));
        return changesNothing(request, next) ? request : applyChange(request, next, ctx.now());
      })!;
    },

    get: (requestId) => reader.get(requestId),
    list: (filters) => reader.list(filters),
    claimNext: (options) => claimNext(ctx, options),
    heartbeat: (requestId, token) => heartbeat(ctx, requestId, token),
    recordResult: (requestId, token, result) => recordResult(ctx, requestId, token, result),
    complete: (requestId, token, result, by) => complete(ctx, requestId, token, result, by),
    fail: (requestId, token, error, options) => fail(ctx, requestId, token, error, options),
    waitForResult: (requestId, { timeoutMs }) => waiters.wait(requestId, getRequest(ctx.db, requestId), timeoutMs),

    startMonitor(options = {}) {
      const { retention: withRetention = true, ...loopOptions } = options;
      const retention = withRetention && retentionInactiveReason(ctx) === null ? () => operator.runRetention() : null;
      const started = startMonitorWithRetention(() => monitorPass(ctx), retention, { intervalMs: resolved.monitorIntervalMs, ...loopOptions });
      const handle: MonitorWithRetention = {
        ...started,
        stop() {
          started.stop();
          monitors.delete(handle);
        },
      };
      monitors.add(handle);
      return handle;
    },

    close() {
      stopping.abort();
      stopCheckpoints();
      for (const monitor of monitors) monitor.stop();
      for (const ingest of ingests.keys()) ingest.stop();
      for (const guard of guards) guard.stop();
      waiters.close();
      ctx.db.close();
      closeRetired();
      archiveDb?.close();
      discardSpares();
    },
  };

  const upkeep: Upkeep = {
    refresh(ids) {
      // The request files alone: sessions and response files have their own reads where they are shown.
      if (!ids) {
        // A follower that watched every change since it caught up vouches for the index; else every file is checked.
        if (readEveryFile) readEveryFile = false;
        else if (ctx.indexing && !followerRebuilt(ctx.db, dir)) {
          // Opened with the rebuild left for later, and no follower builds it: every file is read here.
          index.complete();
          catchUp(false);
        } else if (!syncWithFollower(dir)) reconcile(ctx);
        index.complete();
        return;
      }
      for (const id of ids) assertRequestId(id);
      const changed = ids.filter((id) => !indexedAsIs(ctx, id));
      if (changed.length) ingestRequests(ctx, changed);
    },

    listBeforeIndexed: (filters) => listNewestFirst(filters),

    startIngest(options) {
      let current = startIngest(ctx, sessions, options);
      const handle: IngestHandle = {
        caughtUp: current.caughtUp,
        status: () => current.status(),
        flush: () => current.flush(),
        stop() {
          current.stop();
          ingests.delete(handle);
        },
      };
      ingests.set(handle, () => {
        current.stop();
        current = startIngest(ctx, sessions, options);
      });
      return handle;
    },

    checkIndex,

    startIndexGuard(options = {}) {
      const handle = startIndexGuard(checkIndex, { now: ctx.now, ...options });
      guards.add(handle);
      return handle;
    },

    async rebuildIndex() {
      if (!ctx.indexing) return null;
      const progress = ctx.indexing;
      const fromSeq = feedLastSeq(ctx.db);
      // Without the bundle's thread script (the sources run directly), here and now. A failure
      // leaves `indexing` as it is (the index is not marked complete): a later call tries again.
      const report = (await rebuildOnThread(ctx, progress, stopping.signal)) ?? (stopping.signal.aborted ? null : catchUp(false));
      if (!report || stopping.signal.aborted) return null;
      // What reqwatch writers changed while it ran (the feed names them), read again as it is now.
      ingestRequests(ctx, requestsChangedSince(ctx.db, fromSeq));
      index.complete();
      return report;
    },

    backfillTextIndex: (rows = 1000) => withWritersLock(ctx, () => backfillText(ctx.db, rows)),

    refreshSessions: (ids) => sessions.reconcile(ids),

    pendingWaits: () => waiters.size,
  };

  /**
   * A page of `list` on an index not built yet: the files are read newest first (by modification
   * time) until no file still unread could enter the page, which holds when a file's times are at
   * most its modification time (its writer set them, then wrote it), give or take the file
   * system's clock tick (MTIME_SLACK_MS). Read to the end, the index is complete; stopped before,
   * it stays unfinished for the next open (or a follower) to complete, its rows a page can be settled on.
   */
  function listNewestFirst(filters: ListFilters): RequestPage {
    if (!ctx.indexing) return reader.list(filters);
    const wanted = resolveListFilters(filters);
    const key = wanted.sort === "createdAt" ? "createdAt" : "lastUpdatedAt";
    // Ascending orders, a text search (its index is filled at the end) and callbacks (read from other files) need every file.
    const early = wanted.order === "desc" && wanted.text === undefined && !wanted.callbackFailed;
    const settled = (unreadNewestMtimeMs: number) => {
      if (!early) return false;
      const { items } = listRequests(ctx.db, wanted);
      const last = items.at(-1);
      return items.length === wanted.limit && last !== undefined && last[key] > unreadNewestMtimeMs + MTIME_SLACK_MS;
    };
    // What an earlier command or a follower already indexed, newest first, may hold the page, once the files changed since are read.
    const known = indexedDownTo(ctx.db);
    if (known && settled(known.belowMs)) {
      ingestChangedSince(ctx, known.listedAt - MTIME_SLACK_MS);
      if (settled(known.belowMs)) return reader.list(filters);
    }
    recover(inRebuild(ctx, { newestFirst: true, onProgress: () => {}, settled }), sessions, { processingStuckAfterMs: null });
    if (readMeta(ctx.db, "reconciled_at") !== undefined) {
      index.complete();
      readEveryFile = true;
    }
    return reader.list(filters);
  }
  return { tracker, reader, operator, upkeep, close: () => tracker.close() };
}
