import fs from "node:fs";
import { randomUUID } from "./process/crypto";
import { BulkActions } from "./actions/bulkActions";
import { pauseWorkspace, resumeWorkspace } from "./queue/pause";
import { readPauses } from "./stateFiles/pauseFile";
import { queueStats } from "./db/queries/queueStats";
import { activityRows, liveStateCounts } from "./db/queries/activity";
import { knownValues } from "./db/queries/knownValues";
import { listWorkers, unfinishedBy } from "./db/queries/workers";
import { sessionsSeen } from "./db/queries/sessionsSeen";
import { oldestCreatedAt } from "./db/queries/oldestCreated";
import { requestFileBytes } from "./db/queries/requestFileBytes";
import { backfillText } from "./db/requestText";
import { Sessions } from "./sessions/sessionTracker";
import { archiveReplaced, openArchive, type ArchiveDb } from "./db/archive";
import { cleanup, restore } from "./cleanup/cleanup";
import { retentionInactiveReason, retentionStatus, runRetention } from "./actions/retention";
import { commitChange } from "./store/commitChange";
import { withWritersLock } from "./db/writeLock";
import type { TrackerContext } from "./store/context";
import { ReqwatchError } from "./model/errors";
import { discardSpares } from "./fs/durableWrite";
import { assertRequestId, assertWorkspace } from "./model/ids";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "./model/jsonStructure";
import { countByState } from "./db/queries/countByState";
import { getRequest } from "./db/queries/getRequest";
import { listRequests } from "./db/queries/listRequests";
import { listAllRequests } from "./db/queries/listAllRequests";
import { listUnreadable } from "./db/unreadableFiles";
import { indexProblem, startIndexGuard, type IndexCheck, type IndexGuardHandle } from "./recovery/indexGuard";
import { fileIdentity, openIndex, readMeta, removeIndexFiles, type FileIdentity, type IndexDb } from "./db/openIndex";
import type { IndexLoss } from "./db/writeLock";
import { MAX_PAGE_SIZE, resolveListFilters, type ListFilters } from "./model/listFilters";
import type { MonitorWithRetention, RecoveryReport, RequestPage, ResolvedTrackerOptions, Tracker, TrackerOptions } from "./types";
import { DEFAULT_RETENTION_MS, resolveTrackerOptions } from "./store/options";
import { recover } from "./recovery/recover";
import { rebuildOnThread } from "./recovery/backgroundRebuild";
import { reconcileResponses } from "./responses/responseIndex";
import { responseCounts } from "./db/responseRows";
import { findStuck, monitorPass } from "./monitor/monitorPass";
import { startMonitorWithRetention } from "./monitor/startMonitor";
import { claimNext } from "./queue/claimNext";
import { complete, fail, heartbeat } from "./queue/deliver";
import { writeResultMarker } from "./stateFiles/resultMarker";
import { retry } from "./queue/retry";
import { Waiters } from "./queue/waiters";
import { cancel } from "./queue/cancel";
import { startIngest, type IngestHandle } from "./ingest/startIngest";
import { activeTraceparent } from "./process/activeTrace";
import { feedHead, feedLastSeq, readChanges, requestsChangedSince } from "./db/changes";
import { indexedAsIs, ingestRequests, reconcile } from "./recovery/reconcile";
import { followerRebuilt, syncWithFollower } from "./ingest/followerSync";
import { startCheckpoints } from "./db/checkpoints";
import { describeZodError, requestFieldsSchema, type RequestFields, type RequestRecord } from "./model/requestFormat";
import { BACKGROUND_FROM_FILES, ensureStateDir, holdsAtLeast } from "./stateFiles/stateDir";
import { assertManaged, openStateDir } from "./store/ownership";
import { applyChange, changesNothing, newRequest, type Change } from "./model/transition";
import { openDisabledTracker, trackingOffError } from "./disabledTracker";
import { redactField, redactRequestFields, type Redaction } from "./model/redaction";

export type { TrackerService } from "./trackerInterface";
import type { TrackerService } from "./trackerInterface";

function sameIdentity(a: FileIdentity | null, b: FileIdentity | null): boolean {
  return a !== null && b !== null && a.dev === b.dev && a.ino === b.ino;
}

function validateFields(fields: RequestFields | undefined): RequestFields | undefined {
  if (fields === undefined) return undefined;
  const parsed = requestFieldsSchema().safeParse(fields);
  if (!parsed.success) throw new ReqwatchError("BAD_INPUT", `Invalid request fields: ${describeZodError(parsed.error)}`);
  // What the reader would refuse is never written: nesting it cannot rewrite.
  if (nestedDeeperThan(parsed.data)) throw new ReqwatchError("BAD_INPUT", `Invalid request fields: nested more than ${MAX_JSON_DEPTH} levels deep`);
  return parsed.data;
}

/** Only the public parts of a change: claims, notes and managed fields are the tracker's own. */
function validateChange({ to, fields, reason, by }: Change): Change {
  return { to, fields: validateFields(fields), reason, by };
}

type WorkerResult = Parameters<Tracker["recordResult"]>[2];

/** A result marker is a file too: its text is redacted as the request's will be. */
function redactResult(redaction: Redaction, result: WorkerResult): WorkerResult {
  if (result.outcome === "failed") return { ...result, error: redactField(redaction, "error", result.error) };
  return result.fields ? { ...result, fields: redactRequestFields(redaction, result.fields) } : result;
}

/** A file's times may pass its modification time by this much (the file system stamps it from a coarser clock). */
const MTIME_SLACK_MS = 1000;

const firstPages = new WeakMap<TrackerService, (filters: ListFilters) => RequestPage>();

/**
 * Internal (the CLI's `list`): a page on a tracker opened with `rebuild: "in-background"` whose
 * index is not built yet, read from the newest files until it cannot change; else `list`.
 */
export function listBeforeIndexed(tracker: TrackerService, filters: ListFilters): RequestPage {
  const listNewestFirst = firstPages.get(tracker);
  return listNewestFirst ? listNewestFirst(filters) : tracker.list(filters);
}

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
  return openRecording(resolved);
}

/**
 * `openTracker` for reqwatch's own programs (the dashboard, the CLI, the MCP server): the library's
 * calls with the read model and a person's actions. With tracking off there is nothing to read or
 * act on: the caller checks first (the CLI's `stopIfTrackingOff`), and this refuses.
 */
export function openTrackerService(options: TrackerOptions = {}): TrackerService {
  const resolved = resolveTrackerOptions(options);
  if (!resolved.enabled) throw trackingOffError("Reading or acting on the state folder");
  return openRecording(resolved);
}

function openRecording(resolved: ResolvedTrackerOptions): TrackerService {
  const { dir, ownership } = openStateDir(resolved.stateDir, resolved);
  ensureStateDir(dir);
  let opened = openIndex(dir.indexFile);
  const ctx: TrackerContext = { dir, ownership, db: opened.db, options: resolved, now: resolved.now };
  ctx.keeper = { lost: lostIndex, reopen: reopenInWrite };
  const waiters = new Waiters(() => ctx.db);
  ctx.onCommit = (request) => waiters.notify(request);
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
    if (opened.needsRebuild && !withRecovery && when === "in-background" && holdsAtLeast(dir.requestsDir, BACKGROUND_FROM_FILES)) {
      ctx.indexing = { done: 0, total: 0, startedAt: ctx.now() };
      return null;
    }
    ctx.rebuilding = opened.needsRebuild;
    try {
      const report = withRecovery || opened.needsRebuild ? recover(ctx, sessions, { processingStuckAfterMs: withRecovery ? resolved.processingStuckAfterMs : null }) : null;
      readEveryFile = report !== null;
      return report;
    } finally {
      ctx.rebuilding = false;
    }
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
    const problem = indexProblem(dir, ctx.db, opened.identity);
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
    if (problem.kind === "corrupt" && sameIdentity(fileIdentity(dir.indexFile), opened.identity)) removeIndexFiles(dir.indexFile);
    ensureStateDir(dir);
    const old = ctx.db;
    opened = openIndex(dir.indexFile);
    ctx.db = opened.db;
    old.close();
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
    if (!sameIdentity(now, opened.identity)) return { kind: "replaced", message: "index.db was replaced by another file" };
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
    if (loss.kind === "corrupt" && sameIdentity(fileIdentity(dir.indexFile), opened.identity)) removeIndexFiles(dir.indexFile);
    ensureStateDir(dir);
    const old = ctx.db;
    opened = openIndex(dir.indexFile);
    ctx.db = opened.db;
    retired.add(old);
    setImmediate(closeRetired).unref();
    if (opened.needsRebuild) catchUp(false);
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

  const tracker: TrackerService = {
    stateDir: dir,
    ownership,
    actions,
    sessions,
    options: resolved,
    openReport,

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

    get(requestId) {
      assertRequestId(requestId);
      return getRequest(ctx.db, requestId);
    },

    list(filters) {
      const resolved = resolveListFilters(filters);
      // Without a follower in this process (a CLI command), the response files are read in first.
      if (resolved.callbackFailed && ingests.size === 0) reconcileResponses(ctx);
      return listRequests(ctx.db, resolved);
    },

    *listAll(filters = {}, pageSize = MAX_PAGE_SIZE) {
      const resolved = resolveListFilters({ ...filters, limit: pageSize, cursor: undefined });
      if (resolved.callbackFailed && ingests.size === 0) reconcileResponses(ctx);
      // The snapshot only reads: a search's text index is filled here first, as `list` fills it.
      if (resolved.text !== undefined) while (backfillText(ctx.db, 20_000) > 0);
      yield* listAllRequests(dir.indexFile, resolved);
    },

    countsByState(filters = {}) {
      if (filters.workspace !== undefined) assertWorkspace(filters.workspace);
      if (filters.sessionId !== undefined) assertRequestId(filters.sessionId);
      return countByState(ctx.db, filters);
    },

    oldestCreatedAt() {
      return oldestCreatedAt(ctx.db);
    },

    requestFileBytes() {
      return requestFileBytes(ctx.db);
    },

    responseCounts() {
      return responseCounts(ctx.db);
    },

    sessionsSeen(options) {
      return sessionsSeen(ctx.db, options);
    },

    unreadableFiles() {
      return listUnreadable(ctx.db);
    },

    generation() {
      return readMeta(ctx.db, "generation") ?? opened.generation;
    },

    recover(options = {}) {
      assertManaged(ctx, "Recovery");
      return recover(ctx, sessions, { processingStuckAfterMs: options.processingStuckAfterMs ?? resolved.processingStuckAfterMs });
    },

    refresh(ids) {
      // The request files alone: sessions and response files have their own reads where they are shown.
      if (!ids) {
        // A follower that watched every change since it caught up vouches for the index; else every file is checked.
        if (readEveryFile) readEveryFile = false;
        else if (ctx.indexing && !followerRebuilt(ctx.db, dir)) {
          // Opened with the rebuild left for later, and no follower builds it: every file is read here.
          ctx.indexing = null;
          catchUp(false);
        } else if (!syncWithFollower(dir)) reconcile(ctx);
        ctx.indexing = null;
        return;
      }
      for (const id of ids) assertRequestId(id);
      const changed = ids.filter((id) => !indexedAsIs(ctx, id));
      if (changed.length) ingestRequests(ctx, changed);
    },

    cleanup(options = {}) {
      if (!options.dryRun) assertManaged(ctx, "Cleanup");
      return cleanup(ctx, archive, { olderThanMs: options.olderThanMs ?? resolved.retentionMs ?? DEFAULT_RETENTION_MS, ...options });
    },

    restore(requestId) {
      assertRequestId(requestId);
      return restore(ctx, archive, requestId);
    },

    claimNext(options) {
      if (options?.workspace !== undefined) assertWorkspace(options.workspace);
      assertManaged(ctx, "Claiming");
      return claimNext(ctx, options);
    },

    heartbeat(requestId, token) {
      assertManaged(ctx, "A heartbeat");
      return heartbeat(ctx, requestId, token);
    },

    recordResult(requestId, token, result) {
      assertRequestId(requestId);
      assertManaged(ctx, "Recording a result");
      writeResultMarker(dir, { requestId, token, writtenAt: ctx.now(), ...redactResult(resolved.redaction, result) });
    },

    complete(requestId, token, result, by) {
      // Even a duplicate, which writes no request, removes the result marker.
      assertManaged(ctx, "Completing");
      return complete(ctx, requestId, token, result, by);
    },

    fail(requestId, token, error, options) {
      assertManaged(ctx, "Failing");
      return fail(ctx, requestId, token, error, options);
    },

    retry(target, options) {
      return retry(ctx, target, options);
    },

    cancel(requestIds, options) {
      return cancel(ctx, requestIds, options);
    },

    pause(workspace, options) {
      return pauseWorkspace(ctx, archive, workspace, options);
    },

    resume(workspace, options) {
      return resumeWorkspace(ctx, archive, workspace, options);
    },

    pauses() {
      return readPauses(ctx.dir);
    },

    queueStats() {
      return queueStats(ctx.db);
    },

    activity(options) {
      return { rows: activityRows(ctx.db, options), live: liveStateCounts(ctx.db, options.match) };
    },

    workers(limit) {
      return listWorkers(ctx.db, limit);
    },

    unfinishedBy(worker, limit) {
      return unfinishedBy(ctx.db, worker, limit);
    },

    knownValues(field, prefix = "", limit = 20) {
      return knownValues(ctx.db, field, prefix, limit);
    },

    stuck() {
      return findStuck(ctx);
    },

    monitorPass() {
      return monitorPass(ctx);
    },

    startMonitor(options = {}) {
      const { retention: withRetention = true, ...loopOptions } = options;
      const retention = withRetention && retentionInactiveReason(ctx) === null ? () => runRetention(ctx, actions, archive, stopping.signal) : null;
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

    runRetention() {
      return runRetention(ctx, actions, archive, stopping.signal);
    },

    retention() {
      return retentionStatus(ctx, archive);
    },

    waitForResult(requestId, { timeoutMs }) {
      assertRequestId(requestId);
      return waiters.wait(requestId, getRequest(ctx.db, requestId), timeoutMs);
    },

    pendingWaits() {
      return waiters.size;
    },

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

    changesSince(afterSeq, limit) {
      return readChanges(ctx.db, afterSeq, limit);
    },

    feedHead() {
      return feedHead(ctx.db);
    },

    feedLastSeq() {
      return feedLastSeq(ctx.db);
    },

    backfillTextIndex(rows = 1000) {
      return withWritersLock(ctx, () => backfillText(ctx.db, rows));
    },

    checkIndex,

    startIndexGuard(options = {}) {
      const handle = startIndexGuard(checkIndex, { now: ctx.now, ...options });
      guards.add(handle);
      return handle;
    },

    indexing: () => (ctx.indexing ? { ...ctx.indexing } : null),

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
      ctx.indexing = null;
      return report;
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

  /**
   * A page of `list` on an index not built yet: the files are read newest first (by modification
   * time) until no file still unread could enter the page, which holds when a file's times are at
   * most its modification time (its writer set them, then wrote it), give or take the file
   * system's clock tick (MTIME_SLACK_MS). Read to the end, the index is complete; stopped before,
   * it stays unfinished for the next open (or a follower) to complete.
   */
  function listNewestFirst(filters: ListFilters): RequestPage {
    if (!ctx.indexing) return tracker.list(filters);
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
    ctx.rebuilding = true;
    ctx.rebuild = { newestFirst: true, onProgress: () => {}, settled };
    try {
      recover(ctx, sessions, { processingStuckAfterMs: null });
    } finally {
      ctx.rebuilding = false;
      ctx.rebuild = undefined;
    }
    if (readMeta(ctx.db, "reconciled_at") !== undefined) {
      ctx.indexing = null;
      readEveryFile = true;
    }
    return tracker.list(filters);
  }
  firstPages.set(tracker, listNewestFirst);
  return tracker;
}
